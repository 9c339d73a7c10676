# The layers of src/, bottom first, and the rule docs/DESIGN.md states: a
# file may include headers of its own layer and of the layers below it,
# never above (an include that runs back up would make two layers one).
# Public headers (gpufl/...) may be included anywhere.
# cmake -DSRC=<src dir> -P layers.cmake
set(layers
  core
  ring
  format
  collect
  sink
  backend
  read
  upload
  analyze
  present/timeline
  present/export
  present/report
  present/view
  present/diff
  session
  inject
  serve
  cli)

# The layer a path under src/ belongs to ("" when none).
function(layer_of path out)
  set(found "")
  foreach(layer ${layers})
    string(LENGTH "${layer}/" n)
    string(SUBSTRING "${path}/" 0 ${n} head)
    if(head STREQUAL "${layer}/")
      set(found "${layer}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE sources RELATIVE ${SRC} ${SRC}/*.c ${SRC}/*.h)
set(problems "")
foreach(file ${sources})
  layer_of("${file}" here)
  if(here STREQUAL "")
    string(APPEND problems "\n  ${file}: in no layer; add its folder to tests/layers.cmake and docs/DESIGN.md")
    continue()
  endif()
  list(FIND layers "${here}" here_rank)
  file(STRINGS ${SRC}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" target "${line}")
    if(target MATCHES "^gpufl/" OR NOT target MATCHES "/")
      continue()
    endif()
    layer_of("${target}" there)
    if(there STREQUAL "")
      string(APPEND problems "\n  ${file}: includes ${target}, in no layer")
      continue()
    endif()
    list(FIND layers "${there}" there_rank)
    if(there_rank GREATER here_rank)
      string(APPEND problems "\n  ${file} (${here}) includes ${target} (${there}, a layer above)")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "includes that run back up the layers:${problems}")
endif()
list(LENGTH sources n)
message(STATUS "layers: ${n} files, every include runs down or within its layer")
