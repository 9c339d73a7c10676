/*
 * UTF-8 checks (see utf8.h).
 */
#include "core/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t gpufl__utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* the shortest form only, no UTF-16 surrogates, nothing past U+10FFFF */
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

size_t gpufl__utf8_invalid_at(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t k = gpufl__utf8_seq(u + i, n - i);
        if (!k)
            return i;
        i += k;
    }
    return n;
}

char *gpufl__utf8_fix(const char *s)
{
    size_t n = strlen(s);
    /* each bad byte grows to three: U+FFFD is EF BF BD */
    char *out = malloc(3 * n + 1);
    if (!out)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    char *p = out;
    for (size_t i = 0; i < n;) {
        size_t k = gpufl__utf8_seq(u + i, n - i);
        if (k) {
            memcpy(p, u + i, k);
            p += k;
            i += k;
        } else {
            memcpy(p, "\xef\xbf\xbd", 3);
            p += 3;
            i++;
        }
    }
    *p = '\0';
    return out;
}

json_t *gpufl__json_text(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (gpufl__utf8_invalid_at(s, n) == n)
        return json_stringn_nocheck(s, n);
    char *fixed = gpufl__utf8_fix(s);
    json_t *j = fixed ? json_string_nocheck(fixed) : NULL;
    free(fixed);
    return j;
}
