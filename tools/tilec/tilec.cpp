//===- tilec.cpp - the tilec driver ---------------------------------------===//

#include "Commands.h"

int main(int argc, char **argv) { return tilec::tool::tilecMain(argc, argv); }
