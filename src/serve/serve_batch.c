/*
 * An upload batch into COPY rows (serve_batch.h). Each line gets a parser
 * of its own names (a string table per batch): the server keeps names as
 * text, so ids never leave the batch.
 */
#include "serve/serve_batch.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/event.h"
#include "core/utf8.h"
#include "gpufl/gpufl.h"
#include "read/ndjson_parse.h"
#include "read/strtab.h"

void gpufl__serve_batch_free(gpufl__serve_batch *b)
{
    gpufl__bytebuf_free(&b->copy);
    memset(b, 0, sizeof *b);
}

static void reject(gpufl__serve_batch *b, uint64_t line, const char *reason)
{
    b->rejected++;
    if (b->nerrors < GPUFL__SERVE_MAX_ERRORS) {
        gpufl__serve_line_error *e = &b->errors[b->nerrors++];
        e->line = line;
        snprintf(e->reason, sizeof e->reason, "%s", reason);
    }
}

int gpufl__serve_copy_text(gpufl__bytebuf *out, const char *s, size_t n)
{
    /* worst case: every byte escaped */
    if (gpufl__bytebuf_reserve(out, 2 * n) != 0)
        return GPUFL_ENOMEM;
    char *o = (char *)out->p + out->len;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c >= 0x80) {
            size_t k = gpufl__utf8_seq(u + i, n - i);
            if (k == 0) {
                *o++ = '?';
                i++;
            } else {
                memcpy(o, u + i, k);
                o += k;
                i += k;
            }
            continue;
        }
        switch (c) {
        case '\\': *o++ = '\\', *o++ = '\\'; break;
        case '\t': *o++ = '\\', *o++ = 't'; break;
        case '\n': *o++ = '\\', *o++ = 'n'; break;
        case '\r': *o++ = '\\', *o++ = 'r'; break;
        case 0: *o++ = '?'; break;
        default: *o++ = (char)c;
        }
        i++;
    }
    out->len = (size_t)((uint8_t *)o - out->p);
    return 0;
}

static int put_text(gpufl__bytebuf *out, const char *s) { return gpufl__bytebuf_append(out, s, strlen(s)); }

/* A number field, or \N when !has. */
static int put_num(gpufl__bytebuf *out, bool has, int64_t v)
{
    char buf[32];
    int n = has ? snprintf(buf, sizeof buf, "%" PRId64 "\t", v) : snprintf(buf, sizeof buf, "\\N\t");
    return gpufl__bytebuf_append(out, buf, (size_t)n);
}

/* The interval, name and place of ev, as the columns have them. */
typedef struct columns {
    int64_t ts, dur;
    bool has_dur;
    uint32_t name; /* string id, 0 none */
    bool has_device, has_stream;
    int64_t stream;
} columns;

static int64_t span(uint64_t from, uint64_t to) { return to >= from ? (int64_t)(to - from) : 0; }

static columns columns_of(const gfl_event *ev)
{
    columns c = {.ts = (int64_t)ev->h.ts};
    switch (ev->h.type) {
    case GFL_EV_KERNEL:
        c.dur = span(ev->h.ts, ev->u.kernel.end_ts), c.has_dur = true;
        c.name = ev->u.kernel.name;
        c.has_device = c.has_stream = true, c.stream = ev->u.kernel.stream;
        break;
    case GFL_EV_MEMCPY:
        c.dur = span(ev->h.ts, ev->u.memcpy.end_ts), c.has_dur = true;
        c.has_device = c.has_stream = true, c.stream = ev->u.memcpy.stream;
        break;
    case GFL_EV_MEMSET:
        c.dur = span(ev->h.ts, ev->u.memset.end_ts), c.has_dur = true;
        c.has_device = c.has_stream = true, c.stream = ev->u.memset.stream;
        break;
    case GFL_EV_SYNC:
        c.dur = span(ev->h.ts, ev->u.sync.end_ts), c.has_dur = true;
        c.has_device = c.has_stream = true, c.stream = ev->u.sync.stream;
        break;
    case GFL_EV_SCOPE_END: /* ts is its end: the row holds the interval */
        c.ts = (int64_t)ev->u.scope.begin_ts;
        c.dur = span(ev->u.scope.begin_ts, ev->h.ts), c.has_dur = true;
        c.name = ev->u.scope.name;
        break;
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_CRASH_SCOPE: c.name = ev->u.scope.name; break;
    case GFL_EV_NVTX_RANGE:
        c.dur = span(ev->h.ts, ev->u.nvtx.end_ts), c.has_dur = true;
        c.name = ev->u.nvtx.name;
        break;
    case GFL_EV_NVTX_MARK: c.name = ev->u.nvtx.name; break;
    case GFL_EV_DEVICE_METRICS:
    case GFL_EV_DEVICE_INFO:
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: c.has_device = true; break;
    default: break;
    }
    return c;
}

/* One parsed event's row. */
static int put_row(gpufl__serve_batch *b, const gpufl__strtab *names, uint64_t seq, const gfl_event *ev,
                   const char *line, size_t n)
{
    gpufl__bytebuf *o = &b->copy;
    columns c = columns_of(ev);
    char head[32];
    int hn = snprintf(head, sizeof head, "%" PRIu64 "\t", seq);
    if (gpufl__bytebuf_append(o, head, (size_t)hn) || put_text(o, gpufl__event_type_name(ev->h.type)) ||
        put_text(o, "\t") || put_num(o, true, c.ts) || put_num(o, c.has_dur, c.dur))
        return GPUFL_ENOMEM;
    uint32_t len = 0;
    const char *name = c.name ? gpufl__strtab_str(names, c.name, &len) : NULL;
    if (name ? gpufl__serve_copy_text(o, name, len) : put_text(o, "\\N"))
        return GPUFL_ENOMEM;
    if (put_text(o, "\t") || put_num(o, c.has_device, ev->h.device) || put_num(o, c.has_stream, c.stream) ||
        gpufl__serve_copy_text(o, line, n) || put_text(o, "\n"))
        return GPUFL_ENOMEM;
    b->rows++;
    return 0;
}

int gpufl__serve_batch_build(gpufl__serve_batch *b, uint64_t first_seq, const char *body, size_t n)
{
    gpufl__strtab names;
    if (gpufl__strtab_init(&names) != 0)
        return GPUFL_ENOMEM;
    gpufl__ndjson_parser p;
    gpufl__ndjson_parser_init(&p, &names);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0;) {
        const char *nl = memchr(body + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (body + at)) : n - at;
        const char *line = body + at;
        uint64_t i = b->lines++;
        at += len + (nl != NULL);
        if (len && line[len - 1] == '\r')
            len--;
        if (gpufl__ndjson_blank_line(line, len)) {
            reject(b, i, "an empty line");
            continue;
        }
        if (memchr(line, 0, len) || gpufl__utf8_invalid_at(line, len) != len) {
            reject(b, i, "not UTF-8 text");
            continue;
        }
        gfl_event ev;
        gpufl__meta_line meta;
        char why[128];
        int kind = gpufl__ndjson_parse_line(&p, line, len, &ev, &meta, why, sizeof why);
        if (kind == GPUFL_ENOMEM) {
            rc = GPUFL_ENOMEM;
        } else if (kind < 0) {
            char reason[160];
            snprintf(reason, sizeof reason, "not a gpufl event: %s", why);
            reject(b, i, reason);
        } else if (kind == GFL_LINE_UNKNOWN) {
            reject(b, i, "an unknown \"type\"");
        } else if (kind != GFL_LINE_EVENT) {
            reject(b, i, "a session line (session_start, session_end, log_stopped): session.json carries it");
        } else {
            rc = put_row(b, &names, first_seq + i, &ev, line, len);
        }
    }
    gpufl__ndjson_parser_free(&p);
    gpufl__strtab_free(&names);
    return rc;
}
