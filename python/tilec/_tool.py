"""The `tilec` command of an installed wheel: runs the tilec tool the wheel
carries (tilec/bin/tilec, linked statically: it needs glibc and, to run
kernels, the CUDA driver), with the ptxas the package uses
(_library.use_ptxas: $TILEC_PTXAS, the CUDA toolkit's, else the
nvidia-cuda-nvcc package's)."""

import os
import pathlib
import sys

from ._library import use_ptxas


def main():
    tool = pathlib.Path(__file__).resolve().parent / "bin" / "tilec"
    if not tool.is_file():
        sys.exit("tilec: this installation of the package has no tilec tool "
                 f"({tool}): install the wheel (scripts/build-wheel.sh "
                 "builds it), or use build/bin/tilec of a build")
    use_ptxas()
    os.execv(str(tool), [str(tool)] + sys.argv[1:])
