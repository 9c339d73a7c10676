/*
 * Loading NDJSON logs into a trace on several threads.
 *
 * Each file is cut into byte ranges; a range owns the lines that begin in
 * it (the first byte of the file, or a byte after a '\n'), so a thread
 * starts one byte early to see where its first line begins and reads past
 * its end to finish its last line. Threads parse their ranges
 * (ndjson_parse.c) with a string table of their own, each into its own
 * segment, and keep the session lines they meet for later. Then, on the
 * caller's thread: the session lines are taken in file order (which also
 * tells whose losses a session_end counts), and the segments are merged in
 * file order (trace_merge.c), with the result of one thread reading
 * everything in turn.
 *
 * Damage: bytes after a file's last newline (a writer killed mid-line) are
 * skipped and counted; a line that does not parse is an error naming the
 * file and the line number (counted only then, by a pass over the bytes
 * before it). The first damage in reading order is the one reported.
 *
 * Sizes: gpufl logs run 300-500 bytes per line; a range is a few MiB,
 * about 4 per thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/input.h"
#include "read/loaders.h"
#include "read/ndjson_parse.h"
#include "read/ndjson_session.h"
#include "read/segment.h"
#include "read/trace_internal.h"
#include "read/work_pool.h"

#define BLOCK (1u << 20)
#define MAX_LINE (64u << 20) /* a longer "line" is not one of ours */
#define MIN_RANGE (1u << 20)
#define PARTS_PER_THREAD 4

typedef struct file {
    gpufl__input in;
    bool open;
    int rc; /* could not be opened */
    char err[1024];
} file;

/* A session line met by a range, for the caller to take in order. */
typedef struct meta_rec {
    int kind;
    gpufl__meta_line line;
} meta_rec;

typedef struct range {
    size_t file;
    uint64_t start, end; /* the lines that begin in [start, end) */
    gpufl__strtab names;
    gpufl__segment seg;
    meta_rec *metas;
    size_t nmetas, metas_cap;
    uint64_t unknown; /* lines of types this reader does not know */
    uint64_t torn;    /* bytes after the file's last newline */
    int rc;
    uint64_t err_at; /* the damaged line's first byte */
    char why[768];
} range;

typedef struct load {
    file *files;
    size_t nfiles;
    range *ranges;
    size_t nranges;
} load;

/* ---- one range ------------------------------------------------------------ */

typedef struct reader {
    gpufl__input *in;
    uint64_t off; /* file offset of buf[0] */
    char *buf;
    size_t pos, len, cap; /* unparsed bytes: [pos, len) */
} reader;

/* More bytes into r->buf. Returns the bytes added (0 at the end of the
 * input), or -1 (errno set) or -2 (a line too long). */
static long fill(reader *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->off += r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->cap - r->len < BLOCK) {
        if (r->cap >= MAX_LINE + BLOCK)
            return -2;
        size_t cap = r->cap ? r->cap * 2 : 2 * BLOCK;
        char *b = realloc(r->buf, cap);
        if (!b) {
            errno = ENOMEM;
            return -1;
        }
        r->buf = b;
        r->cap = cap;
    }
    ssize_t n = gpufl__input_read(r->in, r->off + r->len, r->buf + r->len, r->cap - r->len);
    if (n < 0)
        return -1;
    r->len += (size_t)n;
    return (long)n;
}

static int fail_range(range *g, int rc, uint64_t at, const char *why)
{
    g->rc = rc;
    g->err_at = at;
    snprintf(g->why, sizeof g->why, "%s", why);
    return rc;
}

static int keep_meta(range *g, int kind, const gpufl__meta_line *l)
{
    if (g->nmetas == g->metas_cap) {
        size_t cap = g->metas_cap ? g->metas_cap * 2 : 8;
        meta_rec *v = realloc(g->metas, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        g->metas = v;
        g->metas_cap = cap;
    }
    g->metas[g->nmetas++] = (meta_rec){kind, *l};
    return 0;
}

/* One line beginning at file offset at. 0 or < 0 (range failed). */
static int take_line(range *g, gpufl__ndjson_parser *p, const char *line, size_t n, uint64_t at)
{
    if (gpufl__ndjson_blank_line(line, n))
        return 0;
    gfl_event ev;
    gpufl__meta_line meta;
    char why[512];
    int kind = gpufl__ndjson_parse_line(p, line, n, &ev, &meta, why, sizeof why);
    if (kind < 0)
        return fail_range(g, kind, at, why);
    if (kind == GFL_LINE_EVENT) {
        if (gpufl__segment_add(&g->seg, &ev) != 0)
            return fail_range(g, GPUFL_ENOMEM, at, "out of memory");
    } else if (kind == GFL_LINE_UNKNOWN) {
        g->unknown++;
    } else if (keep_meta(g, kind, &meta) != 0) {
        return fail_range(g, GPUFL_ENOMEM, at, "out of memory");
    }
    return 0;
}

static int read_range(range *g, gpufl__input *in, gpufl__ndjson_parser *p)
{
    reader r = {.in = in, .off = g->start ? g->start - 1 : 0};
    int rc = 0;
    bool skip_first = g->start > 0; /* the bytes up to the first line start */
    for (;;) {
        char *start = r.len > r.pos ? r.buf + r.pos : NULL;
        char *nl = start ? memchr(start, '\n', r.len - r.pos) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - start);
            uint64_t at = r.off + r.pos;
            r.pos += n + 1;
            if (skip_first) {
                skip_first = false;
                continue;
            }
            if (at >= g->end)
                break;
            if ((rc = take_line(g, p, start, n, at)) != 0)
                break;
            continue;
        }
        uint64_t at = r.off + r.pos;
        if (!skip_first && at >= g->end)
            break;
        long got = fill(&r);
        if (got == -2) {
            rc = fail_range(g, GPUFL_ECORRUPT, at, "a line longer than 64 MiB: not a gpufl log");
            break;
        }
        if (got < 0) {
            char why[300];
            snprintf(why, sizeof why, "read error: %s", strerror(errno));
            rc = fail_range(g, errno == ENOMEM ? GPUFL_ENOMEM : GPUFL_EIO, at, why);
            break;
        }
        if (got == 0) {
            /* the end of the file: a line without its newline is torn */
            if (!skip_first)
                g->torn = r.len - r.pos;
            break;
        }
    }
    free(r.buf);
    if (rc == 0 && gpufl__segment_finish(&g->seg) != 0)
        rc = fail_range(g, GPUFL_ENOMEM, g->end, "out of memory");
    return rc;
}

static void range_job(void *ctx, size_t job, unsigned worker)
{
    (void)worker;
    load *l = ctx;
    range *g = &l->ranges[job];
    file *f = &l->files[g->file];
    gpufl__ndjson_parser p;
    gpufl__ndjson_parser_init(&p, &g->names);
    (void)read_range(g, &f->in, &p);
    gpufl__ndjson_parser_free(&p);
}

/* ---- cutting files into ranges ------------------------------------------------ */

static int open_files(load *l, const char *const *paths, size_t npaths, const gpufl__input *mem)
{
    l->nfiles = npaths ? npaths : 1;
    l->files = calloc(l->nfiles, sizeof *l->files);
    if (!l->files)
        return GPUFL_ENOMEM;
    if (!npaths) {
        l->files[0].in = *mem;
        return 0;
    }
    for (size_t i = 0; i < npaths; i++) {
        file *f = &l->files[i];
        f->in.fd = -1;
        f->rc = gpufl__input_open_file(&f->in, paths[i], f->err, sizeof f->err);
        f->open = f->rc == 0;
        if (f->rc != 0)
            f->in.size = 0;
    }
    return 0;
}

static int cut_ranges(load *l, unsigned nthreads)
{
    uint64_t total = 0;
    for (size_t i = 0; i < l->nfiles; i++)
        total += l->files[i].in.size;
    uint64_t size = total / ((uint64_t)nthreads * PARTS_PER_THREAD);
    if (size < MIN_RANGE)
        size = MIN_RANGE;
    size_t n = 0;
    for (size_t i = 0; i < l->nfiles; i++)
        n += l->files[i].in.size / size + 1;
    l->ranges = calloc(n, sizeof *l->ranges);
    if (!l->ranges)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < l->nfiles; i++) {
        uint64_t fsize = l->files[i].in.size, pieces = fsize / size + 1;
        for (uint64_t k = 0; k < pieces; k++) {
            range *g = &l->ranges[l->nranges++];
            g->file = i;
            g->start = fsize * k / pieces;
            g->end = k + 1 == pieces ? UINT64_MAX : fsize * (k + 1) / pieces;
            if (gpufl__strtab_init(&g->names) != 0)
                return GPUFL_ENOMEM;
            gpufl__segment_init(&g->seg, &g->names);
        }
    }
    return 0;
}

static void free_load(load *l)
{
    for (size_t i = 0; i < l->nranges; i++) {
        gpufl__segment_free(&l->ranges[i].seg);
        gpufl__strtab_free(&l->ranges[i].names);
        free(l->ranges[i].metas);
    }
    free(l->ranges);
    for (size_t i = 0; i < l->nfiles; i++)
        if (l->files[i].open)
            gpufl__input_close(&l->files[i].in);
    free(l->files);
}

/* ---- after the threads ----------------------------------------------------------- */

/* The number of the line that begins at offset at of in (1 = the first),
 * counting newlines before it; 0 when the file cannot be read again. */
static uint64_t line_number(gpufl__input *in, uint64_t at)
{
    static const size_t chunk = 1u << 16;
    char *buf = malloc(chunk);
    uint64_t line = 1, off = 0;
    while (buf && off < at) {
        size_t want = at - off < chunk ? (size_t)(at - off) : chunk;
        ssize_t n = gpufl__input_read(in, off, buf, want);
        if (n <= 0) {
            line = 0;
            break;
        }
        for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
            line++;
        off += (uint64_t)n;
    }
    if (!buf)
        line = 0;
    free(buf);
    return line;
}

/* The first damage in reading order into err. 0 when none. */
static int first_error(load *l, char *err, size_t err_len)
{
    size_t next_file = 0;
    for (size_t i = 0; i < l->nranges; i++) {
        range *g = &l->ranges[i];
        for (; next_file <= g->file; next_file++)
            if (l->files[next_file].rc != 0) {
                snprintf(err, err_len, "%s", l->files[next_file].err);
                return l->files[next_file].rc;
            }
        if (g->rc != 0) {
            gpufl__input *in = &l->files[g->file].in;
            snprintf(err, err_len, "%s:%llu: %s", in->name, (unsigned long long)line_number(in, g->err_at), g->why);
            return g->rc;
        }
    }
    return 0;
}

/* The session facts of every range's session lines, in order, and the
 * skipped counts into src (which only carries facts: it is never read). */
static int session_facts(load *l, gpufl__event_source *src, gpufl__ndjson_session *s)
{
    for (size_t i = 0; i < l->nranges; i++) {
        const range *g = &l->ranges[i];
        for (size_t k = 0; k < g->nmetas; k++) {
            bool had_start = s->have_start;
            if (gpufl__ndjson_session_line(s, g->metas[k].kind, &g->metas[k].line, &g->names) != 0)
                return GPUFL_ENOMEM;
            if (!had_start && s->have_start)
                src->format_version = s->meta.format_version;
        }
        src->skipped_records += g->unknown;
        src->skipped_bytes += g->torn;
    }
    src->meta = s->meta;
    return 0;
}

int gpufl__ndjson_load(const char *const *paths, size_t npaths, const gpufl__input *mem, const char *what,
                       unsigned nthreads, gpufl_trace **out, char *err, size_t err_len)
{
    *out = NULL;
    if (nthreads == 0)
        nthreads = 1;
    load l = {0};
    gpufl_trace *t = gpufl__trace_new();
    int rc = t ? open_files(&l, paths, npaths, mem) : GPUFL_ENOMEM;
    if (rc == 0)
        rc = cut_ranges(&l, nthreads);
    if (rc == 0) {
        gpufl__parallel_for(nthreads, l.nranges, range_job, &l);
        rc = first_error(&l, err, err_len);
    } else {
        snprintf(err, err_len, "%s: out of memory", what);
    }
    gpufl__event_source facts = {.format = GFL_SOURCE_NDJSON};
    snprintf(facts.path, sizeof facts.path, "%s", what);
    gpufl__ndjson_session session;
    gpufl__ndjson_session_init(&session);
    if (rc == 0) {
        gpufl__segment **segs = malloc((l.nranges ? l.nranges : 1) * sizeof *segs);
        rc = segs ? 0 : GPUFL_ENOMEM;
        for (size_t i = 0; segs && i < l.nranges; i++)
            segs[i] = &l.ranges[i].seg;
        if (rc == 0)
            rc = gpufl__trace_merge(t, segs, l.nranges, nthreads);
        free(segs);
        if (rc == 0)
            rc = session_facts(&l, &facts, &session);
        if (rc == 0)
            rc = gpufl__trace_session_facts(t, &facts);
        if (rc == 0)
            rc = gpufl__trace_bind(t);
        if (rc != 0)
            snprintf(err, err_len, "%s: out of memory loading the trace", what);
    }
    gpufl__ndjson_session_free(&session);
    free_load(&l);
    if (rc != 0) {
        gpufl__trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
