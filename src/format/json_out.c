/*
 * JSON output primitives for the writers. They format into a caller buffer
 * that is known to be large enough (see the *_bound helpers), without
 * printf, allocation or locale: this is the collector's inner loop.
 */
#include "format/json_out.h"

#include "core/utf8.h"

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

char *gpufl__jput_u64(char *p, uint64_t v)
{
    char tmp[20];
    char *end = tmp + sizeof tmp, *q = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    memcpy(p, q, (size_t)(end - q));
    return p + (end - q);
}

char *gpufl__jput_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return gpufl__jput_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return gpufl__jput_u64(p, (uint64_t)v);
}

char *gpufl__jput_fixed(char *p, uint64_t v, unsigned decimals)
{
    uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    p = gpufl__jput_u64(p, v / scale);
    uint64_t frac = v % scale;
    if (decimals == 0 || frac == 0)
        return p;
    *p++ = '.';
    /* leading zeros of the fraction, then its digits without trailing zeros */
    char digits[20];
    for (unsigned i = decimals; i-- > 0;) {
        digits[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    unsigned n = decimals;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    memcpy(p, digits, n);
    return p + n;
}

char *gpufl__jput_hex(char *p, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = hex[v & 15];
        v >>= 4;
    } while (v);
    *p++ = '"';
    *p++ = '0';
    *p++ = 'x';
    while (n)
        *p++ = tmp[--n];
    *p++ = '"';
    return p;
}

char *gpufl__jput_str(char *p, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    *p++ = '"';
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
            run++;
        memcpy(p, s + i, run - i);
        p += run - i;
        i = run;
        if (i >= n)
            break;
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t len = gpufl__utf8_seq(s + i, n - i);
            if (len) {
                memcpy(p, s + i, len);
                p += len;
                i += len;
            } else {
                memcpy(p, "\\ufffd", 6); /* a byte that is not UTF-8 */
                p += 6;
                i++;
            }
            continue;
        }
        *p++ = '\\';
        switch (c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        case '\t': *p++ = 't'; break;
        case '\b': *p++ = 'b'; break;
        case '\f': *p++ = 'f'; break;
        default:
            memcpy(p, "u00", 3);
            p[3] = hex[c >> 4];
            p[4] = hex[c & 15];
            p += 5;
        }
        i++;
    }
    *p++ = '"';
    return p;
}
