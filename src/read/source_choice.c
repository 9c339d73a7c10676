/*
 * Choosing between trace.gflt and the NDJSON logs (see source_choice.h).
 */
#include "read/source_choice.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/bytebuf.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/gflt_chunks.h"
#include "read/gflt_decode.h"
#include "read/gflt_source.h"
#include "read/input.h"
#include "read/ndjson_parse.h"
#include "read/strtab.h"

#define TAIL_BYTES (64u << 10)

/* What the end of one copy says. */
typedef struct copy_facts {
    bool readable; /* its start could be read */
    bool partial;  /* some channel has no file: holds only some events by design */
    bool ended;    /* it holds the session's end, with its losses */
    uint64_t lost; /* accepted events it could not write (ended only) */
    bool has_last;
    uint64_t last_ns;  /* the latest start among its newest events */
    uint64_t start_ns; /* the session's start, 0 unknown */
    char problem[300]; /* why it is not readable */
} copy_facts;

static void note_last(copy_facts *f, uint64_t ts)
{
    if (!f->has_last || ts > f->last_ns)
        f->last_ns = ts;
    f->has_last = true;
}

/* ---- trace.gflt ---------------------------------------------------------- */

/* The newest events: the last events chunk, read and decoded. */
static void gflt_last_chunk(gpufl__event_source *src, const gpufl__gflt_events_chunk *c, copy_facts *f)
{
    gpufl__bytebuf raw = {0}, stored = {0};
    ZSTD_DCtx *zstd = NULL;
    gpufl__gflt_decoder dec;
    memset(&dec, 0, sizeof dec);
    char err[512];
    uint64_t skipped = 0;
    const char *why = "";
    if (gpufl__gflt_chunk_payload(gpufl__gflt_source_input(src), c->offset, &c->header, &raw, &stored, &zstd, err,
                                  sizeof err) == 0 &&
        gpufl__gflt_decode_events(&dec, raw.p, raw.len, c->nstrings, &skipped, &why) == 0)
        for (size_t i = 0; i < dec.n; i++)
            note_last(f, dec.evs[i].h.ts);
    gpufl__gflt_decoder_free(&dec);
    gpufl__bytebuf_free(&raw);
    gpufl__bytebuf_free(&stored);
    ZSTD_freeDCtx(zstd);
}

static void gflt_facts(const char *path, copy_facts *f)
{
    gpufl__input in;
    gpufl__event_source *src = NULL;
    if (gpufl__input_open_file(&in, path, f->problem, sizeof f->problem) != 0 ||
        gpufl__gflt_source_open_scan(&in, &src, f->problem, sizeof f->problem) != 0)
        return;
    gpufl__gflt_events_chunk *chunks = NULL;
    size_t n = 0;
    if (gpufl__gflt_source_scan(src, &chunks, &n) != 0) {
        snprintf(f->problem, sizeof f->problem, "%s", src->err);
    } else {
        const gpufl__session_meta *m = &src->meta;
        f->readable = true;
        f->start_ns = m->start_ns;
        f->ended = m->ended;
        for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
            f->lost += m->lost[ch];
        if (n)
            gflt_last_chunk(src, &chunks[n - 1], f);
    }
    free(chunks);
    gpufl__source_close(src);
}

/* ---- the NDJSON logs ----------------------------------------------------- */

typedef struct tail {
    bool any_line; /* some whole line parsed */
    bool has_event;
    bool ends_session; /* its last whole line is session_end */
    uint64_t lost;     /* that line's */
    uint64_t last_ns;  /* the latest event start in the lines read */
} tail;

/* Parses the whole lines of buf[0..n) (starting at a line start). */
static void tail_lines(gpufl__ndjson_parser *p, const char *buf, size_t n, tail *t)
{
    const char *line = buf, *end = buf + n;
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            break; /* torn: the writer was killed mid-line */
        size_t len = (size_t)(nl - line);
        gfl_event ev;
        gpufl__meta_line meta;
        char why[256];
        int kind = gpufl__ndjson_blank_line(line, len)
                       ? GFL_LINE_UNKNOWN
                       : gpufl__ndjson_parse_line(p, line, len, &ev, &meta, why, sizeof why);
        if (kind > GFL_LINE_UNKNOWN) {
            t->any_line = true;
            t->ends_session = kind == GFL_LINE_SESSION_END;
            if (kind == GFL_LINE_SESSION_END)
                t->lost = meta.lost;
            if (kind == GFL_LINE_EVENT && (!t->has_event || ev.h.ts > t->last_ns)) {
                t->last_ns = ev.h.ts;
                t->has_event = true;
            }
        }
        line = nl + 1;
    }
}

/* The end of one log file: its last TAIL_BYTES, more while they hold no
 * event and the file has more. */
static void tail_of(const char *path, tail *t)
{
    memset(t, 0, sizeof *t);
    gpufl__input in;
    char err[512];
    if (gpufl__input_open_file(&in, path, err, sizeof err) != 0)
        return;
    gpufl__strtab names;
    if (gpufl__strtab_init(&names) != 0) {
        gpufl__input_close(&in);
        return;
    }
    gpufl__ndjson_parser p;
    gpufl__ndjson_parser_init(&p, &names);
    char *buf = NULL;
    for (uint64_t want = TAIL_BYTES;; want *= 2) {
        uint64_t off = in.size > want ? in.size - want : 0;
        size_t n = (size_t)(in.size - off);
        char *b = realloc(buf, n ? n : 1);
        if (!b)
            break;
        buf = b;
        ssize_t r = gpufl__input_read(&in, off, buf, n);
        if (r < 0)
            break;
        size_t skip = 0;
        if (off > 0) { /* the window starts inside a line: from the next one */
            const char *nl = memchr(buf, '\n', (size_t)r);
            skip = nl ? (size_t)(nl - buf) + 1 : (size_t)r;
        }
        memset(t, 0, sizeof *t);
        tail_lines(&p, buf + skip, (size_t)r - skip, t);
        if (t->has_event || off == 0)
            break;
    }
    free(buf);
    gpufl__ndjson_parser_free(&p);
    gpufl__strtab_free(&names);
    gpufl__input_close(&in);
}

/* Whether path's file name is one of channel's parts ("<channel>.log",
 * "<channel>.N.log"). */
static bool of_channel(const char *path, const char *channel)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t c = strlen(channel);
    return strncmp(base, channel, c) == 0 && base[c] == '.';
}

static void ndjson_facts(const char *const *paths, size_t npaths, copy_facts *f)
{
    bool all_ended = true, any_channel = false;
    unsigned absent = (1u << GFL_CHANNEL_COUNT) - 1u; /* channels without a file */
    for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        const char *name = gpufl__channel_name(ch);
        bool newest = true;
        /* newest part first; older ones only while no event was found */
        for (size_t i = npaths; i-- > 0;) {
            if (!of_channel(paths[i], name))
                continue;
            tail t;
            tail_of(paths[i], &t);
            f->readable |= t.any_line;
            if (newest) {
                any_channel = true;
                absent &= ~(1u << ch);
                all_ended &= t.ends_session;
                f->lost += t.lost;
                newest = false;
            }
            if (t.has_event) {
                note_last(f, t.last_ns);
                break;
            }
        }
    }
    f->ended = any_channel && all_ended;
    f->partial = absent != 0;
    if (!f->readable)
        snprintf(f->problem, sizeof f->problem, "no whole line could be read");
}

/* ---- the choice ---------------------------------------------------------- */

static double secs(uint64_t ns, uint64_t start) { return ns > start ? (double)(ns - start) / 1e9 : 0.0; }

void gpufl__source_choose(const char *gflt_path, const char *const *paths, size_t npaths, gpufl__source_choice *out)
{
    copy_facts g, n;
    memset(&g, 0, sizeof g);
    memset(&n, 0, sizeof n);
    gflt_facts(gflt_path, &g);
    ndjson_facts(paths, npaths, &n);
    out->gflt = true;
    out->logs_partial = n.partial;
    if (!g.readable && n.readable) {
        out->gflt = false;
        snprintf(out->why, sizeof out->why, "trace.gflt cannot be read (%s)%s", g.problem,
                 n.partial ? "; the NDJSON logs hold only some channels (no device work)" : "");
    } else if (n.partial) {
        /* log_format compact: the logs leave device work to trace.gflt, so
         * however far they reach, only trace.gflt holds the session */
        snprintf(out->why, sizeof out->why,
                 "trace.gflt holds every event; the NDJSON logs only some channels (log_format compact: "
                 "no device.log)");
    } else if (!n.readable) {
        snprintf(out->why, sizeof out->why, "the session is also in NDJSON logs, but they hold no readable line");
    } else if (g.ended && n.ended) {
        out->gflt = g.lost <= n.lost;
        snprintf(out->why, sizeof out->why,
                 "both copies of the session ended; trace.gflt lost %llu events and the NDJSON "
                 "logs %llu: read the one that lost %s",
                 (unsigned long long)g.lost, (unsigned long long)n.lost,
                 g.lost == n.lost ? "no more (trace.gflt)" : "fewer");
    } else if (n.has_last && (!g.has_last || n.last_ns > g.last_ns)) {
        out->gflt = false;
        if (g.has_last)
            snprintf(out->why, sizeof out->why,
                     "the session did not end cleanly; its NDJSON logs reach %.3f s, trace.gflt "
                     "only %.3f s",
                     secs(n.last_ns, g.start_ns), secs(g.last_ns, g.start_ns));
        else
            snprintf(out->why, sizeof out->why,
                     "the session did not end cleanly; its NDJSON logs hold events, trace.gflt "
                     "none");
    } else if (g.has_last && n.has_last) {
        snprintf(out->why, sizeof out->why,
                 "the session did not end cleanly; trace.gflt reaches %.3f s, its NDJSON logs "
                 "%.3f s",
                 secs(g.last_ns, g.start_ns), secs(n.last_ns, g.start_ns));
    } else {
        snprintf(out->why, sizeof out->why, "trace.gflt and the NDJSON logs hold the same (no events in either)");
    }
}
