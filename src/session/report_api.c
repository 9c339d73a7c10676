/*
 * gpufl_generate_report(): the text report (present/report/report_text.h) of the
 * current session, or of the last one, written from inside the program.
 *
 * It reads the session back from its directory with the trace reader and
 * runs every analysis, as `gpufl report` does, so the two give the same
 * text. For a session still recording, the collector first writes out
 * everything recorded so far (gpufl__session_flush); what other threads
 * record meanwhile may be missing. Stacks are listed by id: symbolizing
 * them would pull libdw into the library (`gpufl report` and `gpufl
 * stacks` do it).
 *
 * Any thread; it holds the session's lifecycle lock only for that flush
 * (gpufl_init and gpufl_shutdown wait for it), not while reading. It reads
 * the whole session into memory: about 30-40 bytes per event, for as long
 * as the call lasts. Never prints.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analysis.h"
#include "core/log.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "present/report/report_text.h"
#include "session/session.h"

/* Where the report goes when no path is given, in the session directory. */
#define DEFAULT_REPORT_NAME "summary.txt"

static int write_report(const gpufl_trace *t, const char *path)
{
    gpufl__ana_report r;
    if (gpufl__analyze_report(t, NULL, &r) != 0) {
        gpufl__set_error("gpufl_generate_report: out of memory analyzing the session");
        return GPUFL_ENOMEM;
    }
    int rc = 0;
    FILE *f = fopen(path, "we");
    if (!f) {
        gpufl__set_error("gpufl_generate_report: cannot write '%s': %s", path, strerror(errno));
        rc = GPUFL_EIO;
    } else {
        rc = gpufl__report_text(t, &r, NULL, f);
        if (fclose(f) != 0 && rc == 0)
            rc = GPUFL_EIO;
        if (rc != 0)
            gpufl__set_error("gpufl_generate_report: writing '%s' failed", path);
    }
    gpufl__ana_report_free(&r);
    return rc;
}

GPUFL_API int gpufl_generate_report(const char *output_path)
{
    const char *dir = gpufl_session_dir();
    if (!dir[0]) {
        gpufl__set_error("gpufl_generate_report: no session yet; call gpufl_init first");
        return GPUFL_ESTATE;
    }
    char path[PATH_MAX + 32];
    if (output_path && output_path[0])
        snprintf(path, sizeof path, "%s", output_path);
    else
        snprintf(path, sizeof path, "%s/%s", dir, DEFAULT_REPORT_NAME);
    gpufl__session_flush();
    gpufl_trace *t;
    char err[1024];
    int rc = gpufl_trace_open(dir, &t, err, sizeof err);
    if (rc != 0) {
        gpufl__set_error("gpufl_generate_report: %s", err);
        return rc;
    }
    rc = write_report(t, path);
    gpufl_trace_close(t);
    return rc;
}
