# cmake -DROOT=<source dir> [-DCLANG_FORMAT=<clang-format>] -P format.cmake
#
# The sources follow .clang-format (docs/DESIGN.md §8, "clang-format checked
# in CI"): fails naming every C/C++/CUDA file that `clang-format --dry-run
# --Werror` would change. The style is pinned to clang-format 14 (Debian's,
# which `make deps-test-tools` installs): other versions lay out a few
# constructs differently, so with none or another version the test says so
# and is skipped (SKIP_REGULAR_EXPRESSION) instead of failing on layout it
# does not own. Fix a failure with `clang-format -i FILE...`, or wrap a hand-
# aligned table in // clang-format off / on.
# Looked up when the test runs, not when the build is configured, so a
# clang-format installed after configuring (make test does) is used.
if(NOT CLANG_FORMAT)
  find_program(CLANG_FORMAT NAMES clang-format-14 clang-format)
endif()
if(NOT CLANG_FORMAT)
  message("format check skipped: clang-format 14 not found (make deps-test-tools installs it)")
  return()
endif()
execute_process(COMMAND ${CLANG_FORMAT} --version OUTPUT_VARIABLE version)
if(NOT version MATCHES "version 14[.]")
  message("format check skipped: ${CLANG_FORMAT} is not clang-format 14: ${version}")
  return()
endif()

set(files "")
foreach(dir src tests bench include examples)
  file(GLOB_RECURSE found RELATIVE ${ROOT} ${ROOT}/${dir}/*.c ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.cpp
       ${ROOT}/${dir}/*.hpp ${ROOT}/${dir}/*.cc ${ROOT}/${dir}/*.cu ${ROOT}/${dir}/*.cuh)
  list(APPEND files ${found})
endforeach()
list(FILTER files EXCLUDE REGEX "^tests/golden/")
list(LENGTH files n)
if(n EQUAL 0)
  message(FATAL_ERROR "no sources under ${ROOT}")
endif()

execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${files} WORKING_DIRECTORY ${ROOT}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  string(REGEX MATCHALL "[^\n:]+:[0-9]+:[0-9]+: error: code should be clang-formatted" hits "${err}")
  set(bad "")
  foreach(hit ${hits})
    string(REGEX REPLACE ":[0-9]+:[0-9]+: error:.*" "" file "${hit}")
    list(APPEND bad ${file})
  endforeach()
  list(REMOVE_DUPLICATES bad)
  if(NOT bad)
    message(FATAL_ERROR "${CLANG_FORMAT} --dry-run failed:\n${err}")
  endif()
  string(REPLACE ";" " " listing "${bad}")
  string(SUBSTRING "${err}" 0 4000 err)
  message(FATAL_ERROR "not formatted as .clang-format says (run: clang-format -i ${listing}):\n  "
                      "${listing}\n\nfirst differences:\n${err}")
endif()
message(STATUS "${n} sources formatted as .clang-format says")
