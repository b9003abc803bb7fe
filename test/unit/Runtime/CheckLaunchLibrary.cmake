# Fails when the launch library's archive (LAUNCH) defines or references a
# symbol of the tuning library. The names are checked against the tuning
# archive (TUNING) first, so that a renamed class cannot make the check pass
# by matching nothing. Run as: cmake -DNM=... -DLAUNCH=... -DTUNING=... -P

# Empty list elements (nm's blank lines between members) are kept and
# filtered out below, as CMake's current list semantics have them.
cmake_policy(SET CMP0007 NEW)

set(tuning_names
  StageCache CacheKey Sha256 AutotuneCache Autotuner PinnedConfigs
  Benchmarker KernelProvider)

function(read_symbols archive out)
  execute_process(COMMAND ${NM} -C ${archive}
    OUTPUT_VARIABLE symbols RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${NM} -C ${archive} failed")
  endif()
  # Square brackets ([abi:cxx11]) would stop a CMake list from splitting.
  string(REPLACE "[" "(" symbols "${symbols}")
  string(REPLACE "]" ")" symbols "${symbols}")
  string(REPLACE ";" "," symbols "${symbols}")
  string(REPLACE "\n" ";" symbols "${symbols}")
  list(FILTER symbols EXCLUDE REGEX "^$")
  set(${out} "${symbols}" PARENT_SCOPE)
endfunction()

read_symbols(${TUNING} tuning_symbols)
read_symbols(${LAUNCH} launch_symbols)
set(found "")
foreach(name ${tuning_names})
  set(pattern "tilec::rt::${name}[^A-Za-z0-9_]")
  set(matches ${tuning_symbols})
  list(FILTER matches INCLUDE REGEX "${pattern}")
  if(NOT matches)
    message(FATAL_ERROR "tilec::rt::${name} is not in ${TUNING}: update the "
      "names in ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  set(matches ${launch_symbols})
  list(FILTER matches INCLUDE REGEX "${pattern}")
  list(APPEND found ${matches})
endforeach()
if(found)
  list(JOIN found "\n  " lines)
  message(FATAL_ERROR "the launch library ${LAUNCH} holds symbols of the "
    "tuning library:\n  ${lines}")
endif()
list(LENGTH launch_symbols count)
message(STATUS "${LAUNCH}: ${count} symbols, none of the tuning library")
