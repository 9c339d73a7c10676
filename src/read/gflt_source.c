/*
 * The .gflt event source (see event_source.h; the format is
 * docs/FORMAT.md's and src/format/gflt_format.h's): the file header, then
 * chunk by chunk (gflt_chunks.c reads, checks and decodes them) the meta,
 * strings, events, stop and end chunks. A chunk cut short by the end of the
 * file is the torn tail of a killed writer and ends the trace quietly; a
 * checksum that fails anywhere is an error naming the file and the chunk's
 * offset.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/varint.h"
#include "format/gflt_format.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/gflt_chunks.h"
#include "read/gflt_source.h"
#include "read/input.h"
#include "read/strtab.h"

typedef struct gflt_source {
    gpufl__event_source base;
    gpufl__input in;
    uint64_t header_size;
    bool done;
    int failed; /* the error next() keeps returning */
    gpufl__strtab strings;
    gpufl__gflt_chunks *chunks;
    const gfl_event *evs; /* the events chunk being handed out */
    size_t n, pos;
    char *meta_text; /* the identity strings, back to back */
    char *stop_detail;
    bool scan;                        /* opened for gpufl__gflt_source_scan */
    gpufl__gflt_events_chunk *listed; /* scan: the events chunks so far */
    size_t nlisted, listed_cap;
} gflt_source;

static int fail(gflt_source *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(gflt_source *s, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(s->base.err, sizeof s->base.err, "%s: %s", s->in.name, msg);
    s->failed = rc;
    return rc;
}

/* ---- small payload readers ---------------------------------------------- */

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static int get_u64(cursor *c, uint64_t *v) { return gpufl__get_varint(&c->p, c->end, v); }

static int get_str(cursor *c, const char **s, size_t *n)
{
    uint64_t len;
    if (get_u64(c, &len) != 0 || len > (uint64_t)(c->end - c->p) || len > GFLT_MAX_STRING_BYTES)
        return -1;
    *s = (const char *)c->p;
    *n = (size_t)len;
    c->p += len;
    return 0;
}

/* ---- chunk payloads ----------------------------------------------------- */

static int meta_chunk(gflt_source *s, cursor c)
{
    gpufl__session_meta *m = &s->base.meta;
    if (s->meta_text)
        return 0; /* the first one counts */
    uint64_t version, start, wall, pid;
    const char *str[4];
    size_t len[4], total = 0;
    if (get_u64(&c, &version) || get_u64(&c, &start) || get_u64(&c, &wall) || get_u64(&c, &pid) || version > UINT32_MAX)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (get_str(&c, &str[i], &len[i]) != 0)
            return -1;
        total += len[i] + 1;
    }
    /* fields a newer writer appended are ignored */
    char *text = malloc(total);
    if (!text)
        return GPUFL_ENOMEM;
    const char **dst[4] = {&m->session_id, &m->app_name, &m->host, &m->gpufl_version};
    char *p = text;
    for (int i = 0; i < 4; i++) {
        memcpy(p, str[i], len[i]);
        p[len[i]] = '\0';
        *dst[i] = p;
        p += len[i] + 1;
    }
    s->meta_text = text;
    m->format_version = (uint32_t)version;
    m->start_ns = start;
    m->start_wall_ns = wall;
    m->pid = gpufl__unzigzag(pid);
    return 0;
}

static int strings_chunk(gflt_source *s, cursor c)
{
    uint64_t first, count;
    if (get_u64(&c, &first) || get_u64(&c, &count) || first != s->strings.n || count > GFLT_MAX_STRINGS - s->strings.n)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        const char *str;
        size_t n;
        if (get_str(&c, &str, &n) != 0)
            return -1;
        if (gpufl__strtab_append(&s->strings, str, n) != 0)
            return GPUFL_ENOMEM;
    }
    return c.p == c.end ? 0 : -1;
}

static int stop_chunk(gflt_source *s, cursor c)
{
    uint64_t ts, reason;
    const char *detail;
    size_t n;
    if (get_u64(&c, &ts) || get_u64(&c, &reason) || get_str(&c, &detail, &n) || reason == 0 || reason > UINT32_MAX)
        return -1;
    if (s->base.meta.stop_reason)
        return 0;
    char *copy = malloc(n + 1);
    if (!copy)
        return GPUFL_ENOMEM;
    memcpy(copy, detail, n);
    copy[n] = '\0';
    s->stop_detail = copy;
    s->base.meta.stop_reason = (uint32_t)reason;
    s->base.meta.stopped_at_ns = ts;
    s->base.meta.stop_detail = copy;
    return 0;
}

static int end_chunk(gflt_source *s, cursor c)
{
    gpufl__session_meta *m = &s->base.meta;
    uint64_t end, wall, lost[GFL_CHANNEL_COUNT];
    if (get_u64(&c, &end) || get_u64(&c, &wall))
        return -1;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        if (get_u64(&c, &lost[ch]))
            return -1;
    m->ended = true;
    m->end_ns = end;
    m->end_wall_ns = wall;
    memcpy(m->lost, lost, sizeof lost);
    /* appended: the final loss counts of the channels in `mask`, nreasons
     * each (reasons this reader does not know are passed over) */
    uint64_t mask, nreasons;
    if (c.p == c.end)
        return 0;
    if (get_u64(&c, &mask) || get_u64(&c, &nreasons) || mask >> GFL_CHANNEL_COUNT)
        return -1;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        if (!(mask >> ch & 1))
            continue;
        m->has_dropped[ch] = true;
        for (uint64_t r = 0; r < nreasons; r++) {
            uint64_t v;
            if (get_u64(&c, &v))
                return -1;
            if (r < GFL_DROP_REASON_COUNT)
                m->dropped[ch][r] = v;
        }
    }
    return 0;
}

/* ---- chunks ------------------------------------------------------------- */

/* Scan: adds a deferred events chunk to the list. 0 or GPUFL_ENOMEM. */
static int list_chunk(gflt_source *s, const gpufl__gflt_item *it)
{
    if (s->nlisted == s->listed_cap) {
        size_t cap = s->listed_cap ? s->listed_cap * 2 : 256;
        gpufl__gflt_events_chunk *v = realloc(s->listed, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        s->listed = v;
        s->listed_cap = cap;
    }
    s->listed[s->nlisted++] = (gpufl__gflt_events_chunk){it->offset, it->header, it->nstrings};
    return 0;
}

/* Reads the next chunk and takes in what it holds. Returns 0 (events may
 * now be waiting), 1 at the end, or a negative gpufl_err. */
static int next_chunk(gflt_source *s)
{
    const gpufl__gflt_item *it;
    uint64_t torn;
    int rc = gpufl__gflt_chunks_next(s->chunks, &it, &torn, s->base.err, sizeof s->base.err);
    if (rc < 0) {
        s->failed = rc;
        return rc;
    }
    if (rc == 0) {
        s->base.skipped_bytes += torn;
        s->done = true;
        return 1;
    }
    if (it->deferred) {
        /* a listed events chunk: no payload (it is read later) */
        if (list_chunk(s, it) != 0)
            return fail(s, GPUFL_ENOMEM, "out of memory reading the chunk at offset %" PRIu64, it->offset);
        return 0;
    }
    cursor c = {it->payload, it->payload + it->len};
    rc = 0;
    switch (it->type) {
    case GFLT_CHUNK_META: rc = meta_chunk(s, c); break;
    case GFLT_CHUNK_STRINGS: rc = strings_chunk(s, c); break;
    case GFLT_CHUNK_STOP: rc = stop_chunk(s, c); break;
    case GFLT_CHUNK_END: rc = end_chunk(s, c); break;
    case GFLT_CHUNK_INDEX:
    case GFLT_CHUNK_TRAILER: break; /* for random access; a full read does not need them */
    case GFLT_CHUNK_EVENTS:
        s->evs = it->events;
        s->n = it->nevents;
        s->pos = 0;
        s->base.skipped_records += it->skipped_events;
        break;
    default:
        s->base.skipped_chunks++; /* a newer writer's */
        break;
    }
    if (rc == GPUFL_ENOMEM)
        return fail(s, rc, "out of memory reading the chunk at offset %" PRIu64, it->offset);
    if (rc != 0)
        return fail(s, GPUFL_ECORRUPT, "chunk at offset %" PRIu64 " (type %u) is damaged", it->offset, it->type);
    return 0;
}

static int gflt_next(gpufl__event_source *base, const gfl_event **ev)
{
    gflt_source *s = (gflt_source *)base;
    if (s->failed)
        return s->failed;
    while (s->pos >= s->n) {
        if (s->done)
            return 0;
        s->n = 0;
        int rc = next_chunk(s);
        if (rc < 0)
            return rc;
    }
    *ev = &s->evs[s->pos++];
    return 1;
}

static void gflt_close(gpufl__event_source *base)
{
    gflt_source *s = (gflt_source *)base;
    gpufl__gflt_chunks_close(s->chunks); /* before the input it reads */
    gpufl__input_close(&s->in);
    gpufl__strtab_free(&s->strings);
    free(s->meta_text);
    free(s->stop_detail);
    free(s->listed);
    free(s);
}

/* The file header: magic, a version this reader knows, checksum. A file
 * shorter than a header that starts like one was cut at birth. */
static int file_header(gflt_source *s)
{
    uint8_t h[GFLT_FILE_HEADER_SIZE];
    size_t have = s->in.size < sizeof h ? (size_t)s->in.size : sizeof h;
    ssize_t r = gpufl__input_read(&s->in, 0, h, have);
    if (r < 0 || (size_t)r != have)
        return fail(s, GPUFL_EIO, "cannot read the file header: %s", r < 0 ? strerror(errno) : "short read");
    size_t magic = have < GFLT_MAGIC_LEN ? have : GFLT_MAGIC_LEN;
    if (memcmp(h, GFLT_MAGIC, magic) != 0)
        return fail(s, GPUFL_ECORRUPT, "not a .gflt file (bad magic)");
    if (have < sizeof h) {
        s->base.skipped_bytes = have;
        s->done = true;
        return 0;
    }
    uint16_t version = gpufl__rd16(h + 8), size = gpufl__rd16(h + 10);
    if (gpufl__rd32(h + 12) != gpufl__crc32c(0, h, 12))
        return fail(s, GPUFL_ECORRUPT, "damaged file header (checksum mismatch)");
    if (version > GFLT_VERSION || version == 0)
        return fail(s, GPUFL_EUNSUPPORTED, "written in .gflt version %u; this gpufl reads version %u (upgrade gpufl)",
                    version, GFLT_VERSION);
    if (size < sizeof h || size > s->in.size)
        return fail(s, GPUFL_ECORRUPT, "impossible file header size %u", size);
    s->base.format_version = version;
    s->header_size = size;
    return 0;
}

static int open_source(gpufl__input *in, bool scan, gpufl__event_source **out, char *err, size_t err_len)
{
    *out = NULL;
    gflt_source *s = calloc(1, sizeof *s);
    if (!s || gpufl__strtab_init(&s->strings) != 0) {
        free(s);
        gpufl__input_close(in);
        snprintf(err, err_len, "%s: out of memory", in->name);
        return GPUFL_ENOMEM;
    }
    s->in = *in;
    s->scan = scan;
    s->base.next = gflt_next;
    s->base.close = gflt_close;
    s->base.strings = gpufl__strtab_lookup(&s->strings);
    s->base.format = GFL_SOURCE_GFLT;
    s->base.format_version = GFLT_VERSION;
    s->base.meta.session_id = s->base.meta.app_name = s->base.meta.host = "";
    s->base.meta.gpufl_version = s->base.meta.stop_detail = "";
    snprintf(s->base.path, sizeof s->base.path, "%s", in->name);
    int rc = file_header(s);
    if (rc == 0 && !s->done && gpufl__gflt_chunks_open(&s->chunks, &s->in, s->header_size, scan) != 0)
        rc = fail(s, GPUFL_ENOMEM, "out of memory");
    /* the meta chunk comes first: read it now so the identity is known */
    if (rc == 0 && !s->done && (rc = next_chunk(s)) > 0)
        rc = 0;
    if (rc < 0) {
        snprintf(err, err_len, "%s", s->base.err);
        gflt_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

int gpufl__gflt_source_open(gpufl__input *in, gpufl__event_source **out, char *err, size_t err_len)
{
    return open_source(in, false, out, err, err_len);
}

int gpufl__gflt_source_open_scan(gpufl__input *in, gpufl__event_source **out, char *err, size_t err_len)
{
    return open_source(in, true, out, err, err_len);
}

int gpufl__gflt_source_scan(gpufl__event_source *base, gpufl__gflt_events_chunk **chunks, size_t *n)
{
    gflt_source *s = (gflt_source *)base;
    int rc = s->failed;
    while (rc == 0 && !s->done)
        rc = next_chunk(s);
    if (rc > 0)
        rc = 0;
    *chunks = s->listed;
    *n = s->nlisted;
    s->listed = NULL;
    s->nlisted = s->listed_cap = 0;
    return rc;
}

gpufl__input *gpufl__gflt_source_input(gpufl__event_source *base) { return &((gflt_source *)base)->in; }

void gpufl__gflt_source_take_strings(gpufl__event_source *base, gpufl__strtab *out)
{
    gflt_source *s = (gflt_source *)base;
    *out = s->strings;
    memset(&s->strings, 0, sizeof s->strings);
    s->base.strings = gpufl__strtab_lookup(&s->strings);
}
