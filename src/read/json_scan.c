/*
 * The NDJSON line scanner (see json_scan.h).
 */
#include "read/json_scan.h"

#include <string.h>

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* Nonzero bytes of the result mark the bytes of w equal to b (repeated). */
static inline uint64_t bytes_equal(uint64_t w, uint64_t b)
{
    uint64_t x = w ^ b;
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* p is just past an opening quote. Returns the closing quote, or NULL.
 * Eight bytes at a time, looking for the quote and a backslash at once:
 * one pass over long names, no library call for short keys. */
static const char *string_end(const char *p, const char *end, bool *escaped)
{
    const uint64_t quotes = 0x2222222222222222ull, backslashes = 0x5c5c5c5c5c5c5c5cull;
    while (p < end) {
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t hit = bytes_equal(w, quotes) | bytes_equal(w, backslashes);
            if (!hit) {
                p += 8;
                continue;
            }
            p += __builtin_ctzll(hit) / 8; /* the first such byte (little-endian) */
        }
        if (*p == '"')
            return p;
        if (*p == '\\') {
            *escaped = true;
            p += 2; /* the escaped character, whatever it is */
            continue;
        }
        p++;
    }
    return NULL;
}

/* Skips a nested array or object starting at p ('[' or '{'). Returns the
 * byte after its end, or NULL. Only the depth is counted, not which kind of
 * bracket opened each level: a value of any depth is skipped in one pass
 * with no stack (a newer writer, or anyone, may nest an unknown field as
 * deep as it likes, and a well-formed line must not read as broken). */
static const char *skip_nested(const char *p, const char *end)
{
    size_t depth = 0;
    while (p < end) {
        char c = *p++;
        if (c == '"') {
            bool esc = false;
            p = string_end(p, end, &esc);
            if (!p)
                return NULL;
            p++;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            if (--depth == 0)
                return p;
        }
    }
    return NULL;
}

static bool literal(const char *p, const char *end, const char *lit, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

/* One value at p into f (kind, val, val_len, escaped). Returns the byte
 * after it, or NULL with *why. */
static const char *scan_value(const char *p, const char *end, gpufl__jfield *f, const char **why)
{
    if (p >= end) {
        *why = "a value is missing";
        return NULL;
    }
    char c = *p;
    f->escaped = false;
    if (c == '"') {
        const char *q = string_end(p + 1, end, &f->escaped);
        if (!q) {
            *why = "a string is not terminated";
            return NULL;
        }
        f->kind = GFL_J_STRING;
        f->val = p + 1;
        f->val_len = (uint32_t)(q - p - 1);
        return q + 1;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        const char *q = p + 1;
        while (q < end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-'))
            q++;
        f->kind = GFL_J_NUMBER;
        f->val = p;
        f->val_len = (uint32_t)(q - p);
        return q;
    }
    if (c == '[' || c == '{') {
        const char *q = skip_nested(p, end);
        if (!q) {
            *why = c == '[' ? "an array is not terminated" : "an object is not terminated";
            return NULL;
        }
        f->kind = c == '[' ? GFL_J_ARRAY : GFL_J_OBJECT;
        f->val = p;
        f->val_len = (uint32_t)(q - p);
        return q;
    }
    static const struct {
        const char *text;
        size_t n;
        uint8_t kind;
    } lits[] = {{"true", 4, GFL_J_TRUE}, {"false", 5, GFL_J_FALSE}, {"null", 4, GFL_J_NULL}};
    for (unsigned i = 0; i < 3; i++)
        if (literal(p, end, lits[i].text, lits[i].n)) {
            f->kind = lits[i].kind;
            f->val = p;
            f->val_len = (uint32_t)lits[i].n;
            return p + lits[i].n;
        }
    *why = "a value is not JSON";
    return NULL;
}

int gpufl__json_fields(const char *line, size_t n, gpufl__jfield *out, int max, const char **why, size_t *at)
{
    const char *p = skip_ws(line, line + n), *end = line + n;
    int count = 0;
    if (p >= end || *p != '{') {
        *why = "the line is not a JSON object";
        *at = (size_t)(p - line);
        return -1;
    }
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
        goto done;
    }
    for (;;) {
        if (p >= end || *p != '"') {
            *why = "expected a quoted key";
            goto fail;
        }
        if (count == max) {
            *why = "too many fields";
            goto fail;
        }
        gpufl__jfield *f = &out[count];
        bool key_escaped = false;
        const char *q = string_end(p + 1, end, &key_escaped);
        if (!q) {
            *why = "a key is not terminated";
            goto fail;
        }
        f->key = p + 1;
        f->key_len = (uint32_t)(q - p - 1);
        p = skip_ws(q + 1, end);
        if (p >= end || *p != ':') {
            *why = "expected ':' after a key";
            goto fail;
        }
        p = skip_ws(p + 1, end);
        const char *v = scan_value(p, end, f, why);
        if (!v)
            goto fail;
        f->key_escaped = key_escaped;
        count++;
        p = skip_ws(v, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}') {
            p++;
            break;
        }
        *why = "expected ',' or '}' after a value";
        goto fail;
    }
done:
    p = skip_ws(p, end);
    if (p != end) {
        *why = "text after the end of the object";
        goto fail;
    }
    return count;
fail:
    *at = (size_t)(p - line);
    return -1;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static long hex4(const char *s)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(s[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static char *put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

long gpufl__json_unescape(const char *s, size_t n, char *out)
{
    const char *end = s + n;
    char *o = out;
    while (s < end) {
        const char *bs = memchr(s, '\\', (size_t)(end - s));
        size_t run = bs ? (size_t)(bs - s) : (size_t)(end - s);
        memmove(o, s, run);
        o += run;
        s += run;
        if (!bs)
            break;
        if (s + 1 >= end)
            return -1;
        char c = s[1];
        s += 2;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            if (end - s < 4)
                return -1;
            long cp = hex4(s);
            if (cp < 0)
                return -1;
            s += 4;
            if (cp >= 0xd800 && cp <= 0xdbff && end - s >= 6 && s[0] == '\\' && s[1] == 'u') {
                long lo = hex4(s + 2);
                if (lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    s += 6;
                }
            }
            if (cp >= 0xd800 && cp <= 0xdfff)
                cp = 0xfffd; /* a lone surrogate */
            o = put_utf8(o, (unsigned long)cp);
            break;
        }
        default: return -1;
        }
    }
    return (long)(o - out);
}

int gpufl__json_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int gpufl__json_i64(const char *s, size_t n, int64_t *out)
{
    uint64_t m;
    if (n && s[0] == '-') {
        if (gpufl__json_u64(s + 1, n - 1, &m) != 0 || m > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = (int64_t)(0 - m);
        return 0;
    }
    if (gpufl__json_u64(s, n, &m) != 0 || m > (uint64_t)INT64_MAX)
        return -1;
    *out = (int64_t)m;
    return 0;
}

int gpufl__json_fixed(const char *s, size_t n, unsigned decimals, uint64_t *out)
{
    const char *dot = memchr(s, '.', n);
    size_t int_len = dot ? (size_t)(dot - s) : n;
    uint64_t v, scale = 1;
    if (gpufl__json_u64(s, int_len, &v) != 0)
        return -1;
    for (unsigned i = 0; i < decimals; i++) {
        if (v > UINT64_MAX / 10)
            return -1;
        v *= 10;
        scale *= 10;
    }
    if (!dot)
        goto done;
    const char *f = dot + 1, *end = s + n;
    if (f == end)
        return -1;
    uint64_t frac = 0;
    for (unsigned i = 0; i < decimals; i++) {
        scale /= 10;
        if (f < end) {
            unsigned d = (unsigned)(*f++ - '0');
            if (d > 9)
                return -1;
            frac += d * scale;
        }
    }
    /* digits past the precision: round half up, and they must be digits */
    bool up = f < end && *f >= '5';
    for (; f < end; f++)
        if (*f < '0' || *f > '9')
            return -1;
    frac += up;
    if (v > UINT64_MAX - frac)
        return -1;
    v += frac;
done:
    *out = v;
    return 0;
}

int gpufl__json_hex(const char *s, size_t n, uint64_t *out)
{
    if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return -1;
    uint64_t v = 0;
    for (size_t i = 2; i < n; i++) {
        int d = hex_digit(s[i]);
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

int gpufl__json_array(const char *s, size_t n, gpufl__jfield *out, int max)
{
    const char *end = s + n, *why;
    if (n < 2 || s[0] != '[' || end[-1] != ']')
        return -1;
    const char *p = skip_ws(s + 1, end - 1);
    int count = 0;
    if (p == end - 1)
        return 0;
    for (;;) {
        if (count == max)
            return -1;
        p = scan_value(p, end - 1, &out[count], &why);
        if (!p)
            return -1;
        count++;
        p = skip_ws(p, end - 1);
        if (p == end - 1)
            return count;
        if (*p != ',')
            return -1;
        p = skip_ws(p + 1, end - 1);
    }
}
