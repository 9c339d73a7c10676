# The settings every gpufl target shares, in one place: the project's
# headers (include/ public, src/ internal), hidden symbols, position-
# independent code (the static parts end up in libgpufl.so and in plugins),
# and the project's warnings. Usage: gpufl_target(TARGET).
function(gpufl_target target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_options(${target} PRIVATE ${gpufl_warnings})
endfunction()

# A library of one folder's sources that others build on: also hands the
# project's headers to whoever links it.
function(gpufl_library target kind)
  add_library(${target} ${kind} ${ARGN})
  gpufl_target(${target})
  if(NOT kind STREQUAL "MODULE")
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  endif()
endfunction()
