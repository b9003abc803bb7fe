# Run as a script (cmake -DSOURCE_DIR=... -DOUTPUT=... -P TilecCommit.cmake)
# on every build: writes OUTPUT, a header defining TILEC_COMMIT (the checkout's
# commit, "+modified" when its files differ from it, "unknown" outside git),
# and leaves the file alone when that did not change, so that only what
# includes it (tools/tilec/TilecMain.cpp, for --version) rebuilds after a commit.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed)
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD --
                  RESULT_VARIABLE modified ERROR_QUIET)
  if(modified)
    string(APPEND commit "+modified")
  endif()
endif()
file(WRITE "${OUTPUT}.tmp" "#define TILEC_COMMIT \"${commit}\"\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
