/*
 * The NDJSON sink (see ndjson_sink.h). Every file part starts with a
 * "session_start" line and the last part ends with "session_end", so each
 * file says which session, channel and part it is, and whether it ended.
 * A sink opened for some channels only (log_format compact: scope and
 * system) has no file for the others and passes over their events: the
 * session's other copy, trace.gflt, holds them, so they are not losses.
 */
#include "sink/ndjson_sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "format/ndjson_format.h"
#include "gpufl/gpufl.h"
#include "sink/logfile.h"
#include "sink/ndjson_meta.h"
#include "sink/session_sinks.h"

typedef struct ndjson_sink {
    gpufl__session_meta session;
    gpufl__disk_budget *budget; /* the session's, shared with the other sinks */
    unsigned channels;          /* GFL_NDJSON_CHANNEL bits: the channels with a file */
    gpufl__logfile files[GFL_CHANNEL_COUNT];
    gpufl__jnames names;                 /* the JSON text of every name written so far */
    uint64_t refused[GFL_CHANNEL_COUNT]; /* events that found writing stopped */
} ndjson_sink;

/* the files as gpufl__channel_name names them, for the status */
static const char *const log_names[GFL_CHANNEL_COUNT] = {
    [GFL_CHANNEL_DEVICE] = "device.log", [GFL_CHANNEL_SCOPE] = "scope.log", [GFL_CHANNEL_SYSTEM] = "system.log"};

static size_t header_line(void *ctx, const gpufl__logfile *f, char *buf, size_t cap)
{
    const ndjson_sink *s = ctx;
    (void)cap; /* HEADER_ROOM >= GFL_NDJSON_META_BOUND */
    return gpufl__ndjson_session_start(buf, &s->session, f->base, f->part);
}

static int sink_event(void *self, const gfl_event *ev, uint64_t now_ns)
{
    ndjson_sink *s = self;
    unsigned ch = gpufl__event_route(ev);
    if (!(s->channels & GFL_NDJSON_CHANNEL(ch)))
        return 0;
    gpufl__logfile *f = &s->files[ch];
    char *p = gpufl__logfile_reserve(f, gpufl__ndjson_line_bound(ev, &s->names), now_ns);
    if (!p) {
        s->refused[ch]++;
        return GPUFL_EIO;
    }
    gpufl__logfile_commit(f, gpufl__ndjson_line(ev, &s->names, p), now_ns);
    return 0;
}

static void sink_tick(void *self, uint64_t now_ns)
{
    ndjson_sink *s = self;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        if (s->channels & GFL_NDJSON_CHANNEL(ch))
            (void)gpufl__logfile_flush(&s->files[ch], now_ns);
}

static void sink_status(void *self, gpufl__sink_status *out)
{
    ndjson_sink *s = self;
    memset(out, 0, sizeof *out);
    out->missing = ~s->channels & GFL_NDJSON_ALL_CHANNELS;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        if (!(s->channels & GFL_NDJSON_CHANNEL(ch)))
            continue;
        out->bytes_written += s->files[ch].bytes_total;
        out->files[out->nfiles].name = log_names[ch];
        out->files[out->nfiles++].bytes = s->files[ch].bytes_total;
        out->lost[ch] = s->refused[ch] + s->files[ch].lines_lost;
    }
    if (s->budget->stopped) {
        out->stop_reason = gpufl__stop_reason_name(s->budget->stopped);
        out->stop_detail = s->budget->detail;
    }
}

static void sink_close(void *self, const gpufl__session_end *end)
{
    ndjson_sink *s = self;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        if (s->channels & GFL_NDJSON_CHANNEL(ch))
            (void)gpufl__logfile_flush(&s->files[ch], end->end_ns);
    /* the closing lines (and session.json after them) go into the space
     * the reserve held, should the disk be full */
    gpufl__disk_budget_release(s->budget);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        if (!(s->channels & GFL_NDJSON_CHANNEL(ch)))
            continue;
        gpufl__logfile *f = &s->files[ch];
        (void)gpufl__logfile_flush(f, end->end_ns);
        gpufl__logfile_note_stop(f);
        char line[GFL_NDJSON_META_BOUND];
        uint64_t lost = f->lines_lost + s->refused[ch], dropped[GFL_DROP_REASON_COUNT];
        if (end->dropped) {
            /* the collector's counts, and what this copy could not write */
            memcpy(dropped, end->dropped[ch], sizeof dropped);
            dropped[GFL_DROP_DISK_LIMIT] += lost;
        }
        size_t n = gpufl__ndjson_session_end(line, &s->session, end->end_ns, end->end_wall_ns, f->lines_written, lost,
                                             end->dropped ? dropped : NULL);
        gpufl__logfile_write_final(f, line, n);
        gpufl__logfile_close(f);
    }
    gpufl__jnames_free(&s->names);
    free(s);
}

int gpufl__ndjson_sink_open(gpufl__sink *out, const gpufl__session_info *info, gpufl__disk_budget *budget,
                            unsigned channels, char *err, size_t err_len)
{
    ndjson_sink *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "out of memory creating the log writers");
        return GPUFL_ENOMEM;
    }
    const gpufl_options *o = &info->config->o;
    gpufl__session_meta_of(info, &s->session);
    gpufl__jnames_init(&s->names, &gpufl__intern_lookup);
    s->budget = budget;
    s->channels = channels & GFL_NDJSON_ALL_CHANNELS;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        if (!(s->channels & GFL_NDJSON_CHANNEL(ch)))
            continue;
        int rc = gpufl__logfile_open(&s->files[ch], info->dir, gpufl__channel_name((uint8_t)ch), o->log_rotate_bytes,
                                     o->flush_logs_always, s->budget, header_line, s);
        if (rc != 0) {
            snprintf(err, err_len, "cannot create %s/%s.log: %s", info->dir, gpufl__channel_name((uint8_t)ch),
                     strerror(errno));
            while (ch-- > 0)
                if (s->channels & GFL_NDJSON_CHANNEL(ch))
                    gpufl__logfile_close(&s->files[ch]);
            free(s);
            return rc;
        }
    }
    *out = (gpufl__sink){"ndjson", s, sink_event, sink_tick, sink_status, sink_close, NULL};
    return 0;
}
