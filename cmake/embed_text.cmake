# Writes a C source that defines one NUL-terminated `const char` array
# holding a text file's bytes exactly, so a page's script and stylesheet can
# live in files of their own and still be inside the program (the HTML
# report must open with no network and no files beside it).
# Each byte becomes a '\xNN' constant: no escaping rules to get wrong, no
# warning for bytes past 0x7f where char is signed, and no string literal
# longer than C's 4095-character translation limit.
# The input may not hold a NUL: the consumers treat the array as a string,
# and would silently stop there.
# cmake -DINPUT=<file> -DOUTPUT=<file.c> -DSYMBOL=<name> -P embed_text.cmake
foreach(var INPUT OUTPUT SYMBOL)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: -D${var}= is required")
  endif()
endforeach()

file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" n_hex)
math(EXPR n_bytes "${n_hex} / 2")
# 16 bytes a line keeps the generated file readable in a diff or a debugger.
string(REPEAT "[0-9a-f]" 32 line_of_hex)
string(REGEX REPLACE "(${line_of_hex})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(FIND "${bytes}" "'\\x00'" nul_at)
if(NOT nul_at EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} holds a NUL byte; it is embedded as a C string")
endif()
string(REPLACE "\n" "\n    " bytes "${bytes}")

file(WRITE "${OUTPUT}"
  "/* Generated from ${INPUT} by cmake/embed_text.cmake: edit that file, not this one. */\n"
  "/* ${n_bytes} bytes and a terminating NUL. */\n"
  "const char ${SYMBOL}[] = {\n"
  "    ${bytes}'\\0'};\n")
