/*
 * The .gflt sink (see gflt_sink.h).
 */
#include "sink/gflt_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/os.h"
#include "core/session_meta.h"
#include "gpufl/gpufl.h"
#include "sink/gflt_writer.h"
#include "sink/session_sinks.h"

#define FLUSH_AGE_NS 900000000ull /* + the 100 ms tick: no chunk waits more than a second */
/* A live session keeps its chunk buffer (128 bytes an event) and the encoder's
 * columns for its whole life: 4096 events keep gpufl's memory small (bench_memory)
 * at a small cost in compression; gpufl convert writes 16384. */
#define LIVE_CHUNK_EVENTS 4096

typedef struct gflt_sink {
    gpufl__session_meta meta;
    gpufl__disk_budget *budget;
    gpufl__gflt_writer w;
    int fd;
    bool durable;
    bool stop_noted;
    uint64_t bytes;    /* in trace.gflt */
    uint64_t now;      /* of the collector call under way, for the budget */
    uint64_t first_ns; /* when the oldest buffered event arrived */
} gflt_sink;

/* The writer's output: one whole chunk, under the budget (closing chunks
 * may use its reserve). A failed or short write is cut back off the file,
 * so it always ends on a chunk boundary. */
static int out_write(void *ctx, const void *data, size_t n, bool final)
{
    gflt_sink *s = ctx;
    if (s->fd < 0)
        return GPUFL_EIO;
    if (!final && !gpufl__disk_budget_allow(s->budget, n, s->now))
        return GPUFL_EIO;
    size_t done = gpufl__write_all(s->fd, data, n);
    if (done == n && s->durable && gpufl__os->fdatasync(s->fd) != 0)
        done = 0;
    if (done != n) {
        int err = errno ? errno : EIO;
        (void)gpufl__os->ftruncate(s->fd, (off_t)s->bytes);
        gpufl__disk_budget_fail(s->budget, "writing trace.gflt", err, s->now);
        return GPUFL_EIO;
    }
    s->bytes += n;
    s->budget->written += n;
    return 0;
}

/* Writing stopped (here or in another sink): say why, once. */
static void note_stop(gflt_sink *s)
{
    if (s->stop_noted || !s->budget->stopped)
        return;
    s->stop_noted = true;
    gpufl__gflt_writer_stop(&s->w, s->budget->stopped, s->budget->stopped_at_ns, s->budget->detail);
}

static int sink_event(void *self, const gfl_event *ev, uint64_t now_ns)
{
    gflt_sink *s = self;
    s->now = now_ns;
    note_stop(s);
    if (gpufl__gflt_writer_pending(&s->w) == 0)
        s->first_ns = now_ns;
    int rc = gpufl__gflt_writer_add(&s->w, ev);
    if (rc == GPUFL_EINVAL)
        s->w.lost[gpufl__event_route(ev)]++; /* a type .gflt has no layout for */
    note_stop(s);
    return rc == 0 ? 0 : GPUFL_EIO;
}

static void sink_tick(void *self, uint64_t now_ns)
{
    gflt_sink *s = self;
    s->now = now_ns;
    note_stop(s);
    if (gpufl__gflt_writer_pending(&s->w) && (s->durable || now_ns - s->first_ns >= FLUSH_AGE_NS))
        (void)gpufl__gflt_writer_flush(&s->w);
    note_stop(s);
}

static void sink_flush(void *self, uint64_t now_ns)
{
    gflt_sink *s = self;
    s->now = now_ns;
    (void)gpufl__gflt_writer_flush(&s->w);
    note_stop(s);
}

static void sink_status(void *self, gpufl__sink_status *out)
{
    gflt_sink *s = self;
    memset(out, 0, sizeof *out);
    out->bytes_written = s->bytes;
    out->files[0].name = "trace.gflt";
    out->files[0].bytes = s->bytes;
    out->nfiles = 1;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        out->lost[ch] = s->w.lost[ch];
    if (s->budget->stopped) {
        out->stop_reason = gpufl__stop_reason_name(s->budget->stopped);
        out->stop_detail = s->budget->detail;
    }
}

static void sink_close(void *self, const gpufl__session_end *end)
{
    gflt_sink *s = self;
    s->now = end->end_ns;
    (void)gpufl__gflt_writer_flush(&s->w);
    /* the closing chunks go into the space the reserve held */
    gpufl__disk_budget_release(s->budget);
    note_stop(s);
    s->meta.ended = true;
    s->meta.end_ns = end->end_ns;
    s->meta.end_wall_ns = end->end_wall_ns;
    memcpy(s->meta.lost, s->w.lost, sizeof s->meta.lost);
    for (int ch = 0; end->dropped && ch < GFL_CHANNEL_COUNT; ch++) {
        /* the collector's counts, and what this copy could not write */
        s->meta.has_dropped[ch] = true;
        memcpy(s->meta.dropped[ch], end->dropped[ch], sizeof s->meta.dropped[ch]);
        s->meta.dropped[ch][GFL_DROP_DISK_LIMIT] += s->w.lost[ch];
    }
    (void)gpufl__gflt_writer_close(&s->w, &s->meta);
    if (s->fd >= 0) {
        if (s->durable)
            (void)gpufl__os->fdatasync(s->fd);
        gpufl__os->close(s->fd);
    }
    free(s);
}

int gpufl__gflt_sink_open(gpufl__sink *out, const gpufl__session_info *info, gpufl__disk_budget *budget, char *err,
                          size_t err_len)
{
    gflt_sink *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "out of memory creating the trace writer");
        return GPUFL_ENOMEM;
    }
    gpufl__session_meta_of(info, &s->meta);
    s->budget = budget;
    s->durable = info->config->o.flush_logs_always;
    s->now = info->start_ns;
    char path[4200];
    snprintf(path, sizeof path, "%s/trace.gflt", info->dir);
    s->fd = gpufl__os->open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
        free(s);
        return GPUFL_EIO;
    }
    gpufl__gflt_out o = {out_write, s};
    int rc = gpufl__gflt_writer_open(&s->w, o, &gpufl__intern_lookup, &s->meta, LIVE_CHUNK_EVENTS, -1);
    if (rc != 0 && rc != GPUFL_EIO) {
        snprintf(err, err_len, "cannot start %s: out of memory", path);
        gpufl__os->close(s->fd);
        free(s);
        return rc;
    }
    if (rc == GPUFL_EIO) {
        /* the file could not even start (the budget has recorded why): the
         * sink lives on, counting what it refuses, like the NDJSON logs */
        gpufl__os->close(s->fd);
        s->fd = -1;
        memset(&s->w, 0, sizeof s->w);
        s->w.out = o;
        s->w.stopped = true;
        s->stop_noted = true;
    }
    *out = (gpufl__sink){"gflt", s, sink_event, sink_tick, sink_status, sink_close, sink_flush};
    return 0;
}
