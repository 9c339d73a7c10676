# cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DWORK_DIR=... -DMODE=install|fetchcontent -P run_consumer.cmake
#
# install:      installs the build tree into a prefix, then builds and runs the
#               consumer through find_package (shared and static) and through
#               pkg-config;
# fetchcontent: builds and runs the consumer with gpufl added by FetchContent.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/logs)

if(MODE STREQUAL "install")
  set(prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
  # gpufl run names the NCCL profiler plugin installed beside the injection library
  file(GLOB inject ${prefix}/lib*/libgpufl_inject.so ${prefix}/lib/*/libgpufl_inject.so)
  if(NOT inject)
    message(FATAL_ERROR "libgpufl_inject.so is not installed under ${prefix}")
  endif()
  get_filename_component(injdir "${inject}" DIRECTORY)
  if(NOT EXISTS ${injdir}/libgpufl_nccl.so)
    message(FATAL_ERROR "libgpufl_nccl.so is not installed beside ${inject}")
  endif()
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer/app -B ${WORK_DIR}/build
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
  run(${WORK_DIR}/build/consumer_shared ${WORK_DIR}/logs)
  run(${WORK_DIR}/build/consumer_static ${WORK_DIR}/logs)
  # pkg-config, the way a Makefile project would use it
  file(GLOB pcdir ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
  # ahead of what the environment already has (jansson may live there)
  if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
    set(ENV{PKG_CONFIG_PATH} "${pcdir}:$ENV{PKG_CONFIG_PATH}")
  else()
    set(ENV{PKG_CONFIG_PATH} "${pcdir}")
  endif()
  execute_process(COMMAND pkg-config --cflags --libs gpufl OUTPUT_VARIABLE flags
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config does not know gpufl (PKG_CONFIG_PATH=$ENV{PKG_CONFIG_PATH})")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  get_filename_component(libdir ${pcdir} DIRECTORY)
  run(cc ${SOURCE_DIR}/tests/consumer/app/main.c ${flags} -Wl,-rpath,${libdir} -o ${WORK_DIR}/consumer_pc)
  run(${WORK_DIR}/consumer_pc ${WORK_DIR}/logs)
elseif(MODE STREQUAL "fetchcontent")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer/fetch -B ${WORK_DIR}/build
      -DGPUFL_SOURCE_DIR=${SOURCE_DIR} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
  run(${WORK_DIR}/build/consumer_fetch ${WORK_DIR}/logs)
else()
  message(FATAL_ERROR "MODE must be install or fetchcontent")
endif()
