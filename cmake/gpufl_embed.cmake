# Build-time embedding of text files (a page's script and stylesheet) into
# a target: they stay real files in the source tree, where an editor and a
# linter can read them, and become a `const char SYMBOL[]` (NUL-terminated)
# in a source generated in the build tree. The target's sources declare
# the symbol themselves (extern const char SYMBOL[];).
# The generated source is remade whenever the file or the script changes.
# Usage: gpufl_embed_text(TARGET SYMBOL FILE), FILE relative to the
# current source directory.
function(gpufl_embed_text target symbol file)
  set(input ${CMAKE_CURRENT_SOURCE_DIR}/${file})
  set(output ${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.c)
  set(script ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake)
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol} -P ${script}
    DEPENDS ${input} ${script}
    COMMENT "Embedding ${file} as ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
