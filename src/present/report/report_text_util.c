/*
 * Number, name and title formatting for the text report (see
 * report_text_util.h). Fixed-precision printf formats only, so the text is
 * the same on every machine.
 */
#include "present/report/report_text_util.h"

#include <inttypes.h>
#include <string.h>

#include "present/report/summary_text.h"

rt_num gpufl__rt_dur(uint64_t ns)
{
    rt_num n;
    gpufl__format_duration(ns, n.s, sizeof n.s);
    return n;
}

rt_num gpufl__rt_sdur(int64_t ns)
{
    rt_num n;
    if (ns >= 0)
        return gpufl__rt_dur((uint64_t)ns);
    n.s[0] = '-';
    gpufl__format_duration((uint64_t)0 - (uint64_t)ns, n.s + 1, sizeof n.s - 1);
    return n;
}

rt_num gpufl__rt_bytes(uint64_t bytes)
{
    rt_num n;
    gpufl__format_bytes(bytes, n.s, sizeof n.s);
    return n;
}

rt_num gpufl__rt_pct(double pct)
{
    rt_num n;
    snprintf(n.s, sizeof n.s, "%.1f %%", pct);
    return n;
}

rt_num gpufl__rt_count(uint64_t v)
{
    /* groups of three digits separated by spaces, as SI writes them */
    char digits[24];
    int nd = snprintf(digits, sizeof digits, "%" PRIu64, v);
    rt_num n;
    size_t o = 0;
    for (int i = 0; i < nd; i++) {
        if (i && (nd - i) % 3 == 0)
            n.s[o++] = ' ';
        n.s[o++] = digits[i];
    }
    n.s[o] = '\0';
    return n;
}

double gpufl__rt_share(uint64_t part, uint64_t whole) { return whole ? (double)part * 100.0 / (double)whole : 0.0; }

const char *gpufl__rt_str(const rt *c, uint32_t id) { return id ? gpufl_trace_string(c->t, id) : ""; }

void gpufl__rt_fit(const char *name, size_t width, char *buf)
{
    size_t n = strlen(name);
    if (n <= width) {
        memcpy(buf, name, n + 1);
        return;
    }
    size_t keep = width > 3 ? width - 3 : 0;
    while (keep > 0 && ((unsigned char)name[keep] & 0xC0) == 0x80)
        keep--; /* do not cut a UTF-8 sequence */
    memcpy(buf, name, keep);
    memcpy(buf + keep, "...", 4);
}

void gpufl__rt_title(const rt *c, const char *title)
{
    fprintf(c->out, "\n%s\n", title);
    for (size_t i = strlen(title); i > 0; i--)
        fputc('-', c->out);
    fputc('\n', c->out);
}

const char *gpufl__rt_plural(uint64_t n) { return n == 1 ? "" : "s"; }
