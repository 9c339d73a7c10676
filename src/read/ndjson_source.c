/*
 * The NDJSON event source (see event_source.h): the channel logs of a
 * session, or one log, read as one stream of events.
 *
 * Files are read in 1 MiB blocks; each '\n'-terminated line is parsed
 * (ndjson_parse.c), and the bytes after a file's last newline, which only a
 * writer killed mid-write leaves, are skipped and counted. session_start,
 * session_end and log_stopped lines fill the session facts; lines of
 * unknown types are counted and skipped.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/input.h"
#include "read/ndjson_parse.h"
#include "read/ndjson_session.h"
#include "read/strtab.h"

#define BLOCK (1u << 20)
#define MAX_LINE (64u << 20) /* a longer "line" is not one of ours */

typedef struct ndjson_source {
    gpufl__event_source base;
    gpufl__strtab strings;
    gpufl__ndjson_parser parser;
    char **paths;
    size_t npaths, next_path;
    gpufl__input in;
    bool in_open, memory;
    uint64_t off; /* read offset in the current input */
    char *buf;    /* bytes read and not yet parsed: [pos, len) */
    size_t pos, len, cap;
    uint64_t line_no; /* of the current file */
    gfl_event ev;
    bool primed; /* ev holds the first event, read at open */
    bool done;
    int failed;
    gpufl__ndjson_session session; /* base.meta is a copy of its meta */
} ndjson_source;

static int fail(ndjson_source *s, int rc, const char *why)
{
    snprintf(s->base.err, sizeof s->base.err, "%s:%llu: %s", s->in.name, (unsigned long long)s->line_no, why);
    s->failed = rc;
    return rc;
}

/* ---- session lines ------------------------------------------------------- */

static int session_line(ndjson_source *s, int kind, const gpufl__meta_line *l)
{
    bool had_start = s->session.have_start;
    if (gpufl__ndjson_session_line(&s->session, kind, l, &s->strings) != 0)
        return fail(s, GPUFL_ENOMEM, "out of memory");
    s->base.meta = s->session.meta;
    if (!had_start && s->session.have_start)
        s->base.format_version = s->session.meta.format_version;
    return 0;
}

/* ---- files and lines ----------------------------------------------------- */

static int open_next_file(ndjson_source *s)
{
    if (s->in_open) {
        gpufl__input_close(&s->in);
        s->in_open = false;
    }
    if (s->memory || s->next_path >= s->npaths) {
        s->done = true;
        return 0;
    }
    char err[1024];
    int rc = gpufl__input_open_file(&s->in, s->paths[s->next_path++], err, sizeof err);
    if (rc != 0) {
        snprintf(s->base.err, sizeof s->base.err, "%s", err);
        s->failed = rc;
        return rc;
    }
    s->in_open = true;
    s->off = 0;
    s->pos = s->len = 0;
    s->line_no = 0;
    return 0;
}

/* More bytes of the current input into buf. Returns the bytes added (0 at
 * its end) or a negative gpufl_err. */
static long fill(ndjson_source *s)
{
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->len -= s->pos;
        s->pos = 0;
    }
    if (s->cap - s->len < BLOCK) {
        if (s->cap >= MAX_LINE + BLOCK)
            return fail(s, GPUFL_ECORRUPT, "a line longer than 64 MiB: not a gpufl log");
        size_t cap = s->cap ? s->cap * 2 : 2 * BLOCK;
        char *b = realloc(s->buf, cap);
        if (!b)
            return fail(s, GPUFL_ENOMEM, "out of memory");
        s->buf = b;
        s->cap = cap;
    }
    ssize_t r = gpufl__input_read(&s->in, s->off, s->buf + s->len, s->cap - s->len);
    if (r < 0) {
        char why[300];
        snprintf(why, sizeof why, "read error: %s", strerror(errno));
        return fail(s, GPUFL_EIO, why);
    }
    s->off += (uint64_t)r;
    s->len += (size_t)r;
    return (long)r;
}

/* The next whole line of the current input (without '\n') in *line, *n.
 * Returns 1, 0 at the end of the input (a torn tail counted), or < 0. */
static int next_line(ndjson_source *s, const char **line, size_t *n)
{
    for (;;) {
        char *start = s->len > s->pos ? s->buf + s->pos : NULL;
        char *nl = start ? memchr(start, '\n', s->len - s->pos) : NULL;
        if (nl) {
            *line = start;
            *n = (size_t)(nl - start);
            s->pos += *n + 1;
            s->line_no++;
            return 1;
        }
        long r = fill(s);
        if (r < 0)
            return (int)r;
        if (r == 0) {
            s->base.skipped_bytes += s->len - s->pos;
            s->pos = s->len;
            return 0;
        }
    }
}

/* Reads on to the next event (in s->ev). 1, 0 at the end, or < 0. */
static int advance(ndjson_source *s)
{
    while (!s->done) {
        if (!s->in_open && !s->memory) {
            if (open_next_file(s) != 0)
                return s->failed;
            continue;
        }
        const char *line;
        size_t n;
        int rc = next_line(s, &line, &n);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            if (open_next_file(s) != 0)
                return s->failed;
            continue;
        }
        if (gpufl__ndjson_blank_line(line, n))
            continue;
        gpufl__meta_line meta;
        char why[512];
        int kind = gpufl__ndjson_parse_line(&s->parser, line, n, &s->ev, &meta, why, sizeof why);
        if (kind < 0)
            return fail(s, kind, why);
        if (kind == GFL_LINE_EVENT)
            return 1;
        if (kind == GFL_LINE_UNKNOWN)
            s->base.skipped_records++;
        else if (session_line(s, kind, &meta) != 0)
            return s->failed;
    }
    return 0;
}

static int ndjson_next(gpufl__event_source *base, const gfl_event **ev)
{
    ndjson_source *s = (ndjson_source *)base;
    if (s->failed)
        return s->failed;
    if (s->primed) {
        s->primed = false;
        *ev = &s->ev;
        return 1;
    }
    int rc = advance(s);
    if (rc == 1)
        *ev = &s->ev;
    return rc;
}

static void ndjson_close(gpufl__event_source *base)
{
    ndjson_source *s = (ndjson_source *)base;
    if (s->in_open)
        gpufl__input_close(&s->in);
    for (size_t i = 0; i < s->npaths; i++)
        free(s->paths[i]);
    free(s->paths);
    gpufl__ndjson_session_free(&s->session);
    free(s->buf);
    gpufl__ndjson_parser_free(&s->parser);
    gpufl__strtab_free(&s->strings);
    free(s);
}

int gpufl__ndjson_source_open(const char *const *paths, size_t npaths, gpufl__input *mem, const char *what,
                              gpufl__event_source **out, char *err, size_t err_len)
{
    *out = NULL;
    ndjson_source *s = calloc(1, sizeof *s);
    if (!s || gpufl__strtab_init(&s->strings) != 0) {
        free(s);
        snprintf(err, err_len, "%s: out of memory", what);
        return GPUFL_ENOMEM;
    }
    s->base.next = ndjson_next;
    s->base.close = ndjson_close;
    s->base.strings = gpufl__strtab_lookup(&s->strings);
    s->base.format = GFL_SOURCE_NDJSON;
    s->base.format_version = 0; /* until a session_start says */
    gpufl__ndjson_session_init(&s->session);
    s->base.meta = s->session.meta;
    snprintf(s->base.path, sizeof s->base.path, "%s", what);
    gpufl__ndjson_parser_init(&s->parser, &s->strings);
    int rc = 0;
    if (npaths == 0) {
        s->in = *mem;
        s->in_open = s->memory = true;
    } else if (!(s->paths = calloc(npaths, sizeof *s->paths))) {
        rc = GPUFL_ENOMEM;
    } else {
        for (size_t i = 0; i < npaths && rc == 0; i++, s->npaths++)
            if (!(s->paths[i] = strdup(paths[i])))
                rc = GPUFL_ENOMEM;
    }
    if (rc != 0) {
        snprintf(err, err_len, "%s: out of memory", what);
        ndjson_close(&s->base);
        return rc;
    }
    /* read up to the first event, so the session's identity is known */
    rc = advance(s);
    if (rc < 0) {
        snprintf(err, err_len, "%s", s->base.err);
        ndjson_close(&s->base);
        return rc;
    }
    s->primed = rc == 1;
    *out = &s->base;
    return 0;
}
