/*
 * Splitting one NDJSON line into its fields, and reading field values. Only
 * what gpufl's own lines need: one JSON object per line whose values are
 * strings, numbers, true/false/null and arrays; any other value (a nested
 * object a newer writer added) is skipped over whole. Strict where it
 * matters: a line that is not one well-formed object is an error with the
 * byte position of the problem.
 *
 * The NDJSON reader calls this for every line (a million lines a second is
 * the target), so it does not allocate and looks at each byte once.
 * Any thread; no state.
 */
#ifndef GPUFL_READ_JSON_SCAN_H
#define GPUFL_READ_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gpufl__jkind {
    GFL_J_STRING,
    GFL_J_NUMBER,
    GFL_J_TRUE,
    GFL_J_FALSE,
    GFL_J_NULL,
    GFL_J_ARRAY,
    GFL_J_OBJECT,
} gpufl__jkind;

typedef struct gpufl__jfield {
    const char *key;
    const char *val; /* strings: without the quotes, escapes not decoded; others: the text */
    uint32_t key_len, val_len;
    uint8_t kind; /* gpufl__jkind */
    bool escaped; /* a string value holds a backslash escape */
    bool key_escaped;
} gpufl__jfield;

#define GFL_JSON_MAX_FIELDS 96

/* Splits the object in line[0..n) (no newline) into at most max fields.
 * Returns the number of fields, or -1 with *why and *at (byte offset). */
int gpufl__json_fields(const char *line, size_t n, gpufl__jfield *out, int max, const char **why, size_t *at);

/* Decodes the escapes of a string value into out (room for n bytes: the
 * decoded text is never longer). Returns the length, or -1 for a bad escape.
 * \u escapes become UTF-8 (surrogate pairs joined; a lone surrogate becomes
 * U+FFFD). */
long gpufl__json_unescape(const char *s, size_t n, char *out);

/* Integers: plain decimal, optional '-' for the signed form; -1 when the
 * text is not one or does not fit. */
int gpufl__json_u64(const char *s, size_t n, uint64_t *out);
int gpufl__json_i64(const char *s, size_t n, int64_t *out);
/* A decimal number times 10^decimals, rounded to nearest ("12.34", 2 ->
 * 1234); non-negative, no exponent. -1 when it is not one. */
int gpufl__json_fixed(const char *s, size_t n, unsigned decimals, uint64_t *out);
/* "0x1f" (the text of a string value) -> 31. */
int gpufl__json_hex(const char *s, size_t n, uint64_t *out);

/* The elements of an array value ("[1,2,3]"): splits into at most max
 * fields (kind and value set, no keys). Returns the count or -1. */
int gpufl__json_array(const char *s, size_t n, gpufl__jfield *out, int max);

#endif /* GPUFL_READ_JSON_SCAN_H */
