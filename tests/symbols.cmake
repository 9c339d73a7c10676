# cmake -DNM=<nm> -DLIBDIR=<build dir> -DINCLUDE=<include/gpufl> -P symbols.cmake
#
# A program that links libgpufl.a shares one namespace with it, so every
# global symbol of gpufl's static archives (LIBDIR/libgpufl*.a) must be
# public API, gpufl_ and declared in include/gpufl/*.h, or internal with the
# gpufl__ prefix (docs/DESIGN.md §8). Anything else is named and fails the
# test: make it static or give it the gpufl__ prefix.
# Names starting with __ belong to the compiler and its sanitizer runtimes.
file(GLOB archives ${LIBDIR}/libgpufl*.a)
if(NOT archives)
  message(FATAL_ERROR "no libgpufl*.a in ${LIBDIR}: build first")
endif()

file(GLOB headers ${INCLUDE}/*.h)
set(public "")
foreach(h ${headers})
  file(READ ${h} text)
  string(REGEX MATCHALL "gpufl_[A-Za-z0-9_]*" names "${text}")
  list(APPEND public ${names})
endforeach()
list(REMOVE_DUPLICATES public)

set(bad "")
set(count 0)
foreach(archive ${archives})
  execute_process(COMMAND ${NM} -g --defined-only ${archive} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -g --defined-only ${archive} failed: ${err}")
  endif()
  get_filename_component(lib ${archive} NAME)
  # "<address> <type> <name>" lines; member headers have no type letter.
  string(REGEX MATCHALL "[0-9a-fA-F]+ [A-Za-z] [^\n]+" lines "${out}")
  foreach(line ${lines})
    string(REGEX REPLACE "^[0-9a-fA-F]+ [A-Za-z] " "" sym "${line}")
    math(EXPR count "${count} + 1")
    if(sym MATCHES "^gpufl__" OR sym MATCHES "^__")
      continue()
    endif()
    if(sym MATCHES "^gpufl_")
      list(FIND public ${sym} i)
      if(i GREATER -1)
        continue()
      endif()
      list(APPEND bad "${lib}: ${sym} (gpufl_ but not in include/gpufl/*.h: make it gpufl__ or static)")
    else()
      list(APPEND bad "${lib}: ${sym}")
    endif()
  endforeach()
endforeach()

if(bad)
  list(LENGTH bad n)
  string(REPLACE ";" "\n  " listing "${bad}")
  message(FATAL_ERROR "${n} global symbol(s) neither public gpufl_ nor internal gpufl__:\n  ${listing}")
endif()
list(LENGTH archives n)
message(STATUS "${count} global symbol definitions in ${n} archives, all gpufl_ (public) or gpufl__")
