/*
 * The session facts of NDJSON logs (see ndjson_session.h).
 */
#include "read/ndjson_session.h"

#include <stdlib.h>
#include <string.h>

#include "format/stop_reason.h"
#include "gpufl/gpufl.h"

void gpufl__ndjson_session_init(gpufl__ndjson_session *s)
{
    memset(s, 0, sizeof *s);
    gpufl__session_meta *m = &s->meta;
    m->session_id = m->app_name = m->host = m->gpufl_version = m->stop_detail = "";
}

void gpufl__ndjson_session_free(gpufl__ndjson_session *s)
{
    for (int i = 0; i < 5; i++)
        free(s->text[i]);
    gpufl__ndjson_session_init(s);
}

/* A copy of string id of names, kept in slot i. */
static int keep_text(gpufl__ndjson_session *s, const gpufl__strtab *names, unsigned i, uint32_t id, const char **dst)
{
    uint32_t len;
    const char *text = gpufl__strtab_str(names, id, &len);
    char *copy = malloc(len + 1);
    if (!copy)
        return GPUFL_ENOMEM;
    memcpy(copy, text, len + 1);
    free(s->text[i]);
    s->text[i] = copy;
    *dst = copy;
    return 0;
}

static uint32_t stop_reason_of(const char *name)
{
    for (uint32_t r = GFL_STOP_DISK_CAP; r <= GFL_STOP_IO_ERROR; r++)
        if (!strcmp(name, gpufl__stop_reason_name((gpufl__stop_reason)r)))
            return r;
    return GFL_STOP_IO_ERROR; /* stopped for a reason this reader does not know */
}

int gpufl__ndjson_session_line(gpufl__ndjson_session *s, int kind, const gpufl__meta_line *l,
                               const gpufl__strtab *names)
{
    gpufl__session_meta *m = &s->meta;
    if (kind == GFL_LINE_SESSION_START) {
        /* every file part starts with one; it says whose losses its
         * session_end will count */
        const char *channel = gpufl__strtab_str(names, l->channel, NULL);
        for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
            if (!strcmp(channel, gpufl__channel_name(ch)))
                s->channel = ch;
    }
    if (kind == GFL_LINE_SESSION_START && !s->have_start) {
        s->have_start = true;
        m->start_ns = l->ts_ns;
        m->start_wall_ns = l->wall_ns;
        m->pid = l->pid;
        m->format_version = (uint32_t)l->format_version;
        if (keep_text(s, names, 0, l->session_id, &m->session_id) ||
            keep_text(s, names, 1, l->app_name, &m->app_name) || keep_text(s, names, 2, l->host, &m->host) ||
            keep_text(s, names, 3, l->gpufl_version, &m->gpufl_version))
            return GPUFL_ENOMEM;
    } else if (kind == GFL_LINE_SESSION_END) {
        /* one per channel: the session ended at the latest; losses add up */
        m->ended = true;
        if (l->ts_ns >= m->end_ns) {
            m->end_ns = l->ts_ns;
            m->end_wall_ns = l->wall_ns;
        }
        m->lost[s->channel] += l->lost;
        if (l->has_dropped) {
            /* final counts: the last session_end of a channel has them */
            m->has_dropped[s->channel] = true;
            memcpy(m->dropped[s->channel], l->dropped, sizeof l->dropped);
        }
    } else if (kind == GFL_LINE_LOG_STOPPED && !m->stop_reason) {
        m->stop_reason = stop_reason_of(gpufl__strtab_str(names, l->reason, NULL));
        m->stopped_at_ns = l->ts_ns;
        return keep_text(s, names, 4, l->detail, &m->stop_detail);
    }
    return 0;
}
