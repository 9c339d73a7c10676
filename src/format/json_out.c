/*
 * JSON output primitives for the writers. They format into a caller buffer
 * that is known to be large enough (see the *_bound helpers), without
 * printf, allocation or locale: this is the collector's inner loop.
 */
#include "format/json_out.h"

#include "core/utf8.h"

const char gpufl__digit_pairs[200] = {
#define PAIRS(t) t, '0', t, '1', t, '2', t, '3', t, '4', t, '5', t, '6', t, '7', t, '8', t, '9'
    PAIRS('0'), PAIRS('1'), PAIRS('2'), PAIRS('3'), PAIRS('4'),
    PAIRS('5'), PAIRS('6'), PAIRS('7'), PAIRS('8'), PAIRS('9'),
#undef PAIRS
};

// clang-format off
const uint64_t gpufl__pow10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
    1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
    10000000000000000000ull,
};
// clang-format on

char *gpufl__jput_fixed(char *p, uint64_t v, unsigned decimals)
{
    if (decimals == 0)
        return gpufl__jput_u64(p, v);
    uint64_t scale = gpufl__pow10[decimals];
    p = gpufl__jput_u64(p, v / scale);
    uint64_t frac = v % scale;
    if (frac == 0)
        return p;
    /* the fraction's digits, leading zeros kept, trailing zeros dropped */
    unsigned n = decimals;
    while (frac % 10 == 0) {
        frac /= 10;
        n--;
    }
    *p++ = '.';
    for (unsigned i = n; i-- > 0;) {
        p[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
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

/* Whether any byte of the 8 in w needs more than a copy: a control
 * character, '"', '\\' or a byte of a multi-byte sequence (>= 0x80). The
 * classic "has a byte less than" / "has a zero byte" tests: exact for the
 * word as a whole, which is all that is asked. */
static inline int word_needs_care(uint64_t w)
{
    const uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
    uint64_t ctl = (w - k01 * 0x20) & ~w;
    uint64_t q = w ^ (k01 * '"'), b = w ^ (k01 * '\\');
    q = (q - k01) & ~q;
    b = (b - k01) & ~b;
    return ((ctl | q | b | w) & k80) != 0;
}

char *gpufl__jput_str(char *p, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    *p++ = '"';
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        /* names are mostly plain ASCII: skip them a word at a time */
        while (run + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + run, 8);
            if (word_needs_care(w))
                break;
            run += 8;
        }
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
