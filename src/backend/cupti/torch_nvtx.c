/*
 * PyTorch's NVTX range texts (torch_nvtx.h).
 */
#include "backend/cupti/torch_nvtx.h"

#include <string.h>

/* The fields PyTorch appends, each after ", ". */
static const char *const SEQ = "seq = ", *const OP_ID = "op_id = ";

static bool starts(const char *s, const char *end, const char *prefix)
{
    size_t n = strlen(prefix);
    return (size_t)(end - s) >= n && !memcmp(s, prefix, n);
}

/* Digits at s (up to end) into *v; the number of digits, 0 for none or too
 * many for 64 bits. */
static size_t digits(const char *s, const char *end, uint64_t *v)
{
    size_t n = 0;
    uint64_t x = 0;
    while (s + n < end && s[n] >= '0' && s[n] <= '9') {
        uint64_t d = (uint64_t)(s[n] - '0');
        if (x > UINT64_MAX / 10 || (x == UINT64_MAX / 10 && d > UINT64_MAX % 10))
            return 0;
        x = x * 10 + d;
        n++;
    }
    *v = x;
    return n;
}

/* The field at f (after ", "): SEQ or OP_ID followed by a number that ends
 * the text or is followed by ','; its value in *v. */
static const char *field_at(const char *f, const char *end, uint64_t *v)
{
    const char *key = starts(f, end, SEQ) ? SEQ : starts(f, end, OP_ID) ? OP_ID : NULL;
    if (!key)
        return NULL;
    const char *num = f + strlen(key);
    size_t n = digits(num, end, v);
    if (n == 0 || (num + n < end && num[n] != ','))
        return NULL;
    return key;
}

size_t gpufl__torch_nvtx_split(const char *text, size_t len, bool *has_seq, uint64_t *seq)
{
    *has_seq = false;
    *seq = 0;
    const char *end = text + len, *name_end = NULL;
    for (const char *p = text; p && p + 2 < end; p = memchr(p + 1, ',', (size_t)(end - p - 1))) {
        if (*p != ',' || p[1] != ' ')
            continue;
        uint64_t v;
        const char *key = field_at(p + 2, end, &v);
        if (!key)
            continue;
        if (!name_end)
            name_end = p;
        if (key == SEQ && !*has_seq) {
            *has_seq = true;
            *seq = v;
        }
    }
    return name_end ? (size_t)(name_end - text) : len;
}
