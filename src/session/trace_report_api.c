/*
 * gpufl_trace_report(): the text or JSON report of a loaded session into
 * memory, for bindings that want what `gpufl report` prints without running
 * the command (the Python package's gpufl.report). The same analyses and
 * renderers as the command and gpufl_generate_report(), so the bytes agree;
 * stacks are listed by id, as in gpufl_generate_report().
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"

#define MAX_TOP 10000 /* as `gpufl report --top` */

static int fail(char *err, size_t err_len, int rc, const char *msg, const char *arg)
{
    if (err && err_len)
        snprintf(err, err_len, "gpufl_trace_report: %s%s%s%s", msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return rc;
}

GPUFL_API int gpufl_trace_report(const gpufl_trace *t, const char *format, uint32_t top, char **text, size_t *len,
                                 char *err, size_t err_len)
{
    if (text)
        *text = NULL;
    if (len)
        *len = 0;
    if (!t || !text || !len)
        return fail(err, err_len, GPUFL_EINVAL, "no trace or no place for the text", NULL);
    bool json = format && !strcmp(format, "json");
    if (!format || (!json && strcmp(format, "text")))
        return fail(err, err_len, GPUFL_EINVAL, "bad format (expected text or json):", format ? format : "(null)");
    if (top > MAX_TOP)
        return fail(err, err_len, GPUFL_EINVAL, "bad top (expected 1 to 10000 kernels, or 0 for 20)", NULL);
    gpufl__ana_options ao;
    gpufl__ana_options_default(&ao);
    if (top)
        ao.top_kernels = top;
    gpufl__ana_report r;
    if (gpufl__analyze_report(t, &ao, &r) != 0)
        return fail(err, err_len, GPUFL_ENOMEM, "out of memory analyzing the session", NULL);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    int rc = out ? 0 : GPUFL_ENOMEM;
    if (!rc)
        rc = json ? gpufl__report_json(t, &r, out) : gpufl__report_text(t, &r, NULL, out);
    if (out && fclose(out) != 0 && !rc)
        rc = GPUFL_ENOMEM;
    gpufl__ana_report_free(&r);
    if (rc) {
        free(buf);
        return fail(err, err_len, GPUFL_ENOMEM, "out of memory writing the report", NULL);
    }
    *text = buf;
    *len = n;
    return 0;
}

GPUFL_API void gpufl_trace_free_text(char *text) { free(text); }
