# cmake -DREADELF=<readelf> [-DLDD=<ldd>] -DFILES=<lib;lib;...> -P no_cuda_dependency.cmake
#
# libgpufl, the injection library and the gpufl command must load on a
# machine without CUDA: CUDA, CUPTI and NVML are reached with dlopen (CUPTI
# only through the libgpufl_cupti.so plugin), never linked. Fails when any
# of FILES needs one of them, directly (readelf -d: NEEDED) or through a
# dependency (ldd).
set(forbidden "libcuda[.]|libcudart|libcupti|libnvidia-ml|libnvperf|libnvrtc|libcublas")
foreach(file ${FILES})
  execute_process(COMMAND ${READELF} -d ${file} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${file} failed: ${err}")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${out}")
  if(NOT needed)
    message(FATAL_ERROR "${file}: readelf shows no NEEDED entry at all; is it a shared object?")
  endif()
  foreach(line ${needed})
    if(line MATCHES "${forbidden}")
      message(FATAL_ERROR "${file} links a CUDA library: ${line}")
    endif()
  endforeach()
  if(LDD)
    execute_process(COMMAND ${LDD} ${file} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND out MATCHES "(${forbidden})[^\n]*")
      message(FATAL_ERROR "${file} pulls in a CUDA library through a dependency: ${CMAKE_MATCH_0}")
    endif()
  endif()
  list(LENGTH needed n)
  message(STATUS "${file}: ${n} NEEDED entries, none of them CUDA")
endforeach()
