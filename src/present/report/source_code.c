/*
 * Source lines' code for the reports (see source_code.h).
 */
#include "present/report/source_code.h"

#include <string.h>

gpufl__source_cache *gpufl__report_code_cache(const gpufl_trace *t)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    return gpufl__source_cache_new(info && info->source ? info->source : ".");
}

gpufl__source_from gpufl__report_code(gpufl__source_cache *c, const char *file, uint32_t line, size_t width, char *buf)
{
    char raw[1024];
    buf[0] = '\0';
    gpufl__source_from from = gpufl__source_cache_line(c, file, line, raw, sizeof raw);
    if (!from)
        return GPUFL__SOURCE_NONE;
    const char *p = raw;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (!n)
        return GPUFL__SOURCE_NONE;
    size_t keep = n <= width ? n : (width > 3 ? width - 3 : 0);
    while (keep > 0 && keep < n && ((unsigned char)p[keep] & 0xC0) == 0x80)
        keep--; /* do not cut a UTF-8 sequence */
    for (size_t i = 0; i < keep; i++) {
        unsigned char ch = (unsigned char)p[i];
        buf[i] = ch == '\t' ? ' ' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    strcpy(buf + keep, keep < n ? "..." : "");
    return from;
}

const char *gpufl__report_code_from(gpufl__source_from from)
{
    switch (from) {
    case GPUFL__SOURCE_COPY: return "copy";
    case GPUFL__SOURCE_UNCHANGED: return "file";
    case GPUFL__SOURCE_NOW: return "file_now";
    default: return NULL;
    }
}

void gpufl__report_code_json(jw *w, gpufl__source_cache *c, const char *file, uint32_t line)
{
    char code[201];
    gpufl__source_from from = line ? gpufl__report_code(c, file, line, sizeof code - 1, code) : GPUFL__SOURCE_NONE;
    if (from) {
        gpufl__jw_str(w, "code", code);
        gpufl__jw_str(w, "code_from", gpufl__report_code_from(from));
    } else {
        gpufl__jw_null(w, "code");
        gpufl__jw_null(w, "code_from");
    }
}
