/*
 * Building a gpufl_trace from any event source, on the calling thread: the
 * events go into one segment (segment.c), which is merged into the trace
 * (trace_merge.c) as the parallel loaders merge many. The fuzzers, `gpufl
 * convert`-style callers and the reference of the loaders' tests use it;
 * gpufl_trace_open() uses the parallel loaders (trace_load.c).
 *
 * Also the session facts every loader takes from its source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/stop_reason.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/segment.h"
#include "read/trace_internal.h"

static int text(gpufl_trace *t, const char *s, uint32_t *out)
{
    return gpufl__strtab_intern(&t->strings, s, strlen(s), out);
}

int gpufl__trace_session_facts(gpufl_trace *t, const gpufl__event_source *src)
{
    const gpufl__session_meta *m = &src->meta;
    gpufl_trace_info *i = &t->info;
    if (text(t, m->session_id, &i->session_id) || text(t, m->app_name, &i->app_name) || text(t, m->host, &i->host) ||
        text(t, m->gpufl_version, &i->gpufl_version))
        return GPUFL_ENOMEM;
    i->format_version = src->format_version;
    i->source_format = src->format == GFL_SOURCE_GFLT ? GPUFL_TRACE_GFLT : GPUFL_TRACE_NDJSON;
    i->pid = (int32_t)m->pid;
    i->start_ns = m->start_ns;
    i->start_wall_ns = m->start_wall_ns;
    i->end_ns = m->ended ? m->end_ns : 0;
    i->skipped_bytes = src->skipped_bytes;
    i->skipped_lines = src->skipped_records;
    i->skipped_chunks = src->skipped_chunks;
    /* A channel's final counts, when its file ended with them, are the
     * truth; without them (a killed program), the "dropped" events read
     * and the losses of a stopped writer are all there is. */
    memset(i->dropped, 0, sizeof i->dropped);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        i->lost[ch] = m->lost[ch];
        if (m->has_dropped[ch]) {
            for (int r = 0; r < GFL_DROP_REASON_COUNT; r++)
                i->dropped[r] += m->dropped[ch][r];
            continue;
        }
        for (int r = 0; r < 16; r++)
            i->dropped[r] += t->dropped[ch][r];
        i->dropped[GFL_DROP_DISK_LIMIT] += m->lost[ch];
    }
    if (m->stop_reason) {
        if (text(t, gpufl__stop_reason_name((gpufl__stop_reason)m->stop_reason), &i->stop_reason) ||
            text(t, m->stop_detail, &i->stop_detail))
            return GPUFL_ENOMEM;
        i->stopped_at_ns = m->stopped_at_ns;
    }
    snprintf(t->source, sizeof t->source, "%s", src->path);
    return 0;
}

int gpufl__trace_build(gpufl__event_source *src, gpufl_trace **out, char *err, size_t err_len)
{
    *out = NULL;
    gpufl_trace *t = gpufl__trace_new();
    gpufl__segment *seg = malloc(sizeof *seg);
    if (!t || !seg) {
        gpufl__trace_free(t);
        free(seg);
        snprintf(err, err_len, "%s: out of memory", src->path);
        return GPUFL_ENOMEM;
    }
    gpufl__segment_init(seg, gpufl__strtab_of(&src->strings));
    const gfl_event *ev;
    int rc;
    while ((rc = gpufl__source_next(src, &ev)) == 1)
        if ((rc = gpufl__segment_add(seg, ev)) != 0)
            break;
    if (rc < 0 && rc != GPUFL_ENOMEM) {
        snprintf(err, err_len, "%s", src->err);
    } else if (rc == 0) {
        rc = gpufl__segment_finish(seg);
        if (rc == 0)
            rc = gpufl__trace_merge(t, &seg, 1, 1);
        if (rc == 0)
            rc = gpufl__trace_session_facts(t, src);
        if (rc == 0)
            rc = gpufl__trace_bind(t);
    }
    if (rc == GPUFL_ENOMEM)
        snprintf(err, err_len, "%s: out of memory loading the trace", src->path);
    gpufl__segment_free(seg);
    free(seg);
    if (rc != 0) {
        gpufl__trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
