/*
 * The NDJSON sink (see ndjson_sink.h). Every file part starts with a
 * "session_start" line and the last part ends with "session_end", so each
 * file says which session, channel and part it is, and whether it ended.
 */
#include "sink/ndjson_sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "gpufl/gpufl.h"
#include "sink/json_out.h"
#include "sink/logfile.h"
#include "sink/ndjson_format.h"

typedef struct ndjson_sink {
    const gpufl__session_info *info;
    gpufl__disk_budget budget;
    gpufl__logfile files[GFL_CHANNEL_COUNT];
    uint64_t refused[GFL_CHANNEL_COUNT]; /* events that found writing stopped */
} ndjson_sink;

static char *session_fields(char *p, const gpufl__session_info *info)
{
    p = GFL_JLIT(p, ",\"session_id\":");
    p = gpufl__jput_str(p, info->id, strlen(info->id));
    p = GFL_JLIT(p, ",\"app_name\":");
    p = gpufl__jput_str(p, info->app_name, strnlen(info->app_name, 200));
    return p;
}

static size_t header_line(void *ctx, const gpufl__logfile *f, char *buf, size_t cap)
{
    const ndjson_sink *s = ctx;
    const gpufl__session_info *info = s->info;
    (void)cap; /* the fields below are bounded well under HEADER_ROOM */
    char *p = GFL_JLIT(buf, "{\"type\":\"session_start\",\"ts_ns\":");
    p = gpufl__jput_u64(p, info->start_ns);
    p = GFL_JLIT(p, ",\"wall_ns\":");
    p = gpufl__jput_u64(p, info->start_wall_ns);
    p = session_fields(p, info);
    p = GFL_JLIT(p, ",\"pid\":");
    p = gpufl__jput_u64(p, (uint64_t)info->pid);
    p = GFL_JLIT(p, ",\"host\":");
    p = gpufl__jput_str(p, info->host, strnlen(info->host, 200));
    p = GFL_JLIT(p, ",\"channel\":");
    p = gpufl__jput_str(p, f->base, strlen(f->base));
    p = GFL_JLIT(p, ",\"part\":");
    p = gpufl__jput_u64(p, f->part);
    p = GFL_JLIT(p, ",\"format_version\":");
    p = gpufl__jput_u64(p, GFL_FORMAT_VERSION);
    p = GFL_JLIT(p, ",\"gpufl_version\":\"" GPUFL_VERSION_STRING "\"}\n");
    return (size_t)(p - buf);
}

static int sink_event(void *self, const gfl_event *ev, uint64_t now_ns)
{
    ndjson_sink *s = self;
    unsigned ch = gpufl__event_route(ev);
    gpufl__logfile *f = &s->files[ch];
    char *p = gpufl__logfile_reserve(f, gpufl__ndjson_bound(ev), now_ns);
    if (!p) {
        s->refused[ch]++;
        return GPUFL_EIO;
    }
    gpufl__logfile_commit(f, gpufl__ndjson_format(ev, p), now_ns);
    return 0;
}

static void sink_tick(void *self, uint64_t now_ns)
{
    ndjson_sink *s = self;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        (void)gpufl__logfile_flush(&s->files[ch], now_ns);
}

static void sink_status(void *self, gpufl__sink_status *out)
{
    ndjson_sink *s = self;
    memset(out, 0, sizeof *out);
    out->bytes_written = s->budget.written;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        out->lost[ch] = s->refused[ch] + s->files[ch].lines_lost;
    if (s->budget.stopped) {
        out->stop_reason = gpufl__stop_reason_name(s->budget.stopped);
        out->stop_detail = s->budget.detail;
    }
}

static void sink_close(void *self, const gpufl__session_end *end)
{
    ndjson_sink *s = self;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        gpufl__logfile *f = &s->files[ch];
        (void)gpufl__logfile_flush(f, end->end_ns);
        gpufl__logfile_note_stop(f);
        char line[1024];
        char *p = GFL_JLIT(line, "{\"type\":\"session_end\",\"ts_ns\":");
        p = gpufl__jput_u64(p, end->end_ns);
        p = GFL_JLIT(p, ",\"wall_ns\":");
        p = gpufl__jput_u64(p, end->end_wall_ns);
        p = session_fields(p, s->info);
        p = GFL_JLIT(p, ",\"lines\":");
        p = gpufl__jput_u64(p, f->lines_written);
        p = GFL_JLIT(p, ",\"lost\":");
        p = gpufl__jput_u64(p, f->lines_lost + s->refused[ch]);
        p = GFL_JLIT(p, "}\n");
        gpufl__logfile_write_final(f, line, (size_t)(p - line));
        gpufl__logfile_close(f);
    }
    free(s);
}

int gpufl__ndjson_sink_open(gpufl__sink *out, const gpufl__session_info *info, char *err,
                            size_t err_len)
{
    ndjson_sink *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "out of memory creating the log writers");
        return GPUFL_ENOMEM;
    }
    const gpufl_options *o = &info->config->o;
    s->info = info;
    gpufl__disk_budget_init(&s->budget, info->dir, o->session_max_bytes, o->min_free_bytes);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        int rc = gpufl__logfile_open(&s->files[ch], info->dir, gpufl__channel_name((uint8_t)ch),
                                     o->log_rotate_bytes, o->flush_logs_always, &s->budget,
                                     header_line, s);
        if (rc != 0) {
            snprintf(err, err_len, "cannot create %s/%s.log: %s", info->dir,
                     gpufl__channel_name((uint8_t)ch), strerror(errno));
            while (ch-- > 0)
                gpufl__logfile_close(&s->files[ch]);
            free(s);
            return rc;
        }
    }
    *out = (gpufl__sink){"ndjson", s, sink_event, sink_tick, sink_status, sink_close};
    return 0;
}
