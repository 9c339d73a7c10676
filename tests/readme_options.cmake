# The options table in README.md must be exactly `gpufl options --markdown`.
# cmake -DCLI=... -DREADME=... -P readme_options.cmake
execute_process(COMMAND ${CLI} options --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpufl options --markdown failed")
endif()
file(READ ${README} readme)
string(FIND "${readme}" "<!-- options:begin -->\n" begin)
string(FIND "${readme}" "<!-- options:end -->" end)
if(begin LESS 0 OR end LESS 0)
  message(FATAL_ERROR "README.md has no <!-- options:begin/end --> markers")
endif()
math(EXPR begin "${begin} + 23")
math(EXPR len "${end} - ${begin}")
string(SUBSTRING "${readme}" ${begin} ${len} table)
if(NOT table STREQUAL generated)
  message(FATAL_ERROR "README.md's options table differs from `gpufl options --markdown`; "
                      "paste the command's output between the markers")
endif()
