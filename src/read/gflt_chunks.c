/*
 * The .gflt chunk reader (see gflt_chunks.h).
 *
 * Slots hold what one chunk becomes: its payload, or its decoded events, or
 * the end of the file, or an error. The producer (the helper thread, or the
 * caller itself for small inputs) fills slots in file order; the caller
 * holds one slot at a time and gives it back on its next call. Three slots:
 * one held, two being filled ahead.
 */
#include "read/gflt_chunks.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/bytebuf.h"
#include "core/varint.h"
#include "format/gflt_format.h"
#include "gpufl/gpufl.h"
#include "read/gflt_decode.h"
#include "read/input.h"

#define SLOTS 3
#define THREAD_MIN_BYTES (4u << 20) /* smaller inputs are read on the caller's thread */

enum { FILLED_CHUNK, FILLED_END, FILLED_ERROR };

typedef struct slot {
    int filled;    /* FILLED_* */
    int rc;        /* FILLED_ERROR: the error */
    uint64_t torn; /* FILLED_END: bytes of a torn tail */
    char err[768];
    gpufl__gflt_item item;
    gpufl__bytebuf raw;
    gpufl__gflt_decoder dec;
} slot;

struct gpufl__gflt_chunks {
    gpufl__input *in;
    /* producer state */
    uint64_t off;
    uint32_t nstrings; /* strings defined so far: event string ids are below */
    bool finished;     /* produced the end or an error */
    bool defer;        /* events chunks are listed, not read */
    gpufl__bytebuf stored;
    ZSTD_DCtx *zstd;
    slot slots[SLOTS];
    /* the queue: filled slots are [head, head + count) mod SLOTS */
    bool threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned head, count;
    bool holding; /* the caller holds slots[head] */
    bool stop;
};

/* ---- producing one slot -------------------------------------------------- */

static int fail(gpufl__gflt_chunks *c, slot *s, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(gpufl__gflt_chunks *c, slot *s, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(s->err, sizeof s->err, "%s: %s", c->in->name, msg);
    s->filled = FILLED_ERROR;
    s->rc = rc;
    c->finished = true;
    return rc;
}

static void end_of_input(gpufl__gflt_chunks *c, slot *s, uint64_t torn)
{
    s->filled = FILLED_END;
    s->torn = torn;
    c->finished = true;
}

/* Whether every byte from off to the end is 0 (a file system that extended
 * the file before the data reached it, as after a power loss). */
static bool zero_tail(gpufl__gflt_chunks *c, uint64_t off)
{
    uint8_t buf[4096];
    while (off < c->in->size) {
        ssize_t r = gpufl__input_read(c->in, off, buf, sizeof buf);
        if (r <= 0)
            return false;
        for (ssize_t i = 0; i < r; i++)
            if (buf[i])
                return false;
        off += (uint64_t)r;
    }
    return true;
}

static int read_exact_in(gpufl__input *in, uint64_t off, void *buf, size_t n, char *err, size_t err_len)
{
    ssize_t r = gpufl__input_read(in, off, buf, n);
    if (r < 0) {
        snprintf(err, err_len, "%s: read error at offset %" PRIu64 ": %s", in->name, off, strerror(errno));
        return GPUFL_EIO;
    }
    if ((size_t)r != n) {
        snprintf(err, err_len, "%s: the file was cut short while being read (offset %" PRIu64 ")", in->name, off);
        return GPUFL_EIO;
    }
    return 0;
}

int gpufl__gflt_chunk_payload(gpufl__input *in, uint64_t off, const gpufl__gflt_chunk_header *h, gpufl__bytebuf *raw,
                              gpufl__bytebuf *stored, ZSTD_DCtx **zstd, char *err, size_t err_len)
{
    bool compressed = h->flags & GFLT_FLAG_ZSTD;
    gpufl__bytebuf *dst = compressed ? stored : raw;
    dst->len = 0;
    if (gpufl__bytebuf_reserve(dst, h->stored_len ? h->stored_len : 1) != 0) {
        snprintf(err, err_len, "%s: out of memory for a chunk of %u bytes", in->name, h->stored_len);
        return GPUFL_ENOMEM;
    }
    int rc = read_exact_in(in, off + GFLT_CHUNK_HEADER_SIZE, dst->p, h->stored_len, err, err_len);
    if (rc != 0)
        return rc;
    dst->len = h->stored_len;
    if (gpufl__crc32c(0, dst->p, h->stored_len) != h->payload_crc) {
        snprintf(err, err_len, "%s: damaged chunk at offset %" PRIu64 " (checksum mismatch)", in->name, off);
        return GPUFL_ECORRUPT;
    }
    if (!compressed)
        return 0;
    raw->len = 0;
    if (gpufl__bytebuf_reserve(raw, h->raw_len ? h->raw_len : 1) != 0 || (!*zstd && !(*zstd = ZSTD_createDCtx()))) {
        snprintf(err, err_len, "%s: out of memory for a chunk of %u bytes", in->name, h->raw_len);
        return GPUFL_ENOMEM;
    }
    size_t r = ZSTD_decompressDCtx(*zstd, raw->p, h->raw_len, stored->p, h->stored_len);
    if (ZSTD_isError(r) || r != h->raw_len) {
        snprintf(err, err_len, "%s: chunk at offset %" PRIu64 " does not decompress", in->name, off);
        return GPUFL_ECORRUPT;
    }
    raw->len = r;
    return 0;
}

/* The checked header of the chunk at c->off in *h and, unless it is an
 * events chunk being deferred, its checked, decompressed payload in s->raw.
 * Returns 0, 1 at the end of the input (slot filled with the end), or < 0. */
static int load(gpufl__gflt_chunks *c, slot *s, gpufl__gflt_chunk_header *h)
{
    uint64_t left = c->in->size - c->off;
    uint8_t hb[GFLT_CHUNK_HEADER_SIZE];
    if (left < sizeof hb) {
        end_of_input(c, s, left);
        return 1;
    }
    int rc = read_exact_in(c->in, c->off, hb, sizeof hb, s->err, sizeof s->err);
    if (rc != 0) {
        s->filled = FILLED_ERROR;
        s->rc = rc;
        c->finished = true;
        return rc;
    }
    if (gpufl__gflt_chunk_header_get(hb, h) != 0) {
        if (zero_tail(c, c->off)) {
            end_of_input(c, s, left);
            return 1;
        }
        return fail(c, s, GPUFL_ECORRUPT, "damaged chunk header at offset %" PRIu64 " (checksum mismatch)", c->off);
    }
    if (h->stored_len > left - sizeof hb) {
        end_of_input(c, s, left); /* cut inside its payload: the torn tail of a killed writer */
        return 1;
    }
    if (h->stored_len > GFLT_MAX_CHUNK_BYTES || h->raw_len > GFLT_MAX_CHUNK_BYTES || (h->flags & ~GFLT_FLAGS_KNOWN) ||
        (!(h->flags & GFLT_FLAG_ZSTD) && h->raw_len != h->stored_len))
        return fail(c, s, GPUFL_ECORRUPT, "chunk at offset %" PRIu64 " has impossible sizes or flags", c->off);
    if (c->defer && h->type == GFLT_CHUNK_EVENTS)
        return 0;
    rc = gpufl__gflt_chunk_payload(c->in, c->off, h, &s->raw, &c->stored, &c->zstd, s->err, sizeof s->err);
    if (rc != 0) {
        s->filled = FILLED_ERROR;
        s->rc = rc;
        c->finished = true;
    }
    return rc;
}

/* Fills s with the next chunk (or the end, or an error). */
static void produce(gpufl__gflt_chunks *c, slot *s)
{
    gpufl__gflt_chunk_header h = {0};
    if (load(c, s, &h) != 0)
        return;
    s->filled = FILLED_CHUNK;
    s->item = (gpufl__gflt_item){.type = h.type, .offset = c->off, .payload = s->raw.p, .len = s->raw.len};
    uint64_t at = c->off;
    c->off += GFLT_CHUNK_HEADER_SIZE + h.stored_len;
    if (c->defer && h.type == GFLT_CHUNK_EVENTS) {
        s->item.payload = NULL;
        s->item.len = 0;
        s->item.deferred = true;
        s->item.header = h;
        s->item.nstrings = c->nstrings;
    } else if (h.type == GFLT_CHUNK_STRINGS) {
        /* only the count here (event string ids must stay below it); the
         * caller reads the strings themselves */
        const uint8_t *p = s->raw.p, *end = p + s->raw.len;
        uint64_t first, count;
        if (gpufl__get_varint(&p, end, &first) || gpufl__get_varint(&p, end, &count) || first != c->nstrings ||
            count > GFLT_MAX_STRINGS - c->nstrings)
            fail(c, s, GPUFL_ECORRUPT, "strings chunk at offset %" PRIu64 " is damaged", at);
        else
            c->nstrings += (uint32_t)count;
    } else if (h.type == GFLT_CHUNK_EVENTS) {
        const char *why;
        int rc = gpufl__gflt_decode_events(&s->dec, s->raw.p, s->raw.len, c->nstrings, &s->item.skipped_events, &why);
        if (rc == GPUFL_ENOMEM)
            fail(c, s, rc, "out of memory decoding the chunk at offset %" PRIu64, at);
        else if (rc != 0)
            fail(c, s, rc, "events chunk at offset %" PRIu64 ": %s", at, why);
        s->item.events = s->dec.evs;
        s->item.nevents = s->dec.n;
    }
}

/* ---- the helper thread and the queue ------------------------------------- */

static void *read_ahead(void *arg)
{
    gpufl__gflt_chunks *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->stop && !c->finished) {
        if (c->count == SLOTS) {
            pthread_cond_wait(&c->changed, &c->lock);
            continue;
        }
        slot *s = &c->slots[(c->head + c->count) % SLOTS];
        /* this slot is outside the filled range: the caller does not touch
         * it until count says it is filled */
        pthread_mutex_unlock(&c->lock);
        produce(c, s);
        pthread_mutex_lock(&c->lock);
        c->count++;
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int gpufl__gflt_chunks_open(gpufl__gflt_chunks **out, gpufl__input *in, uint64_t first, bool defer_events)
{
    gpufl__gflt_chunks *c = calloc(1, sizeof *c);
    if (!c)
        return GPUFL_ENOMEM;
    c->in = in;
    c->off = first;
    c->nstrings = 1; /* id 0, "", needs no definition */
    c->defer = defer_events;
    c->threaded = !defer_events && in->fd >= 0 && in->size >= THREAD_MIN_BYTES;
    if (c->threaded) {
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->changed, NULL);
        if (pthread_create(&c->thread, NULL, read_ahead, c) != 0) {
            pthread_mutex_destroy(&c->lock);
            pthread_cond_destroy(&c->changed);
            c->threaded = false; /* read on the caller's thread instead */
        }
    }
    *out = c;
    return 0;
}

static int take(slot *s, const gpufl__gflt_item **item, uint64_t *torn, char *err, size_t err_len)
{
    if (s->filled == FILLED_ERROR) {
        snprintf(err, err_len, "%s", s->err);
        return s->rc;
    }
    if (s->filled == FILLED_END) {
        *torn = s->torn;
        return 0;
    }
    *item = &s->item;
    return 1;
}

int gpufl__gflt_chunks_next(gpufl__gflt_chunks *c, const gpufl__gflt_item **item, uint64_t *torn, char *err,
                            size_t err_len)
{
    *torn = 0;
    if (!c->threaded) {
        slot *s = &c->slots[0];
        if (!c->finished)
            produce(c, s);
        return take(s, item, torn, err, err_len);
    }
    pthread_mutex_lock(&c->lock);
    if (c->holding) {
        /* give back the slot the caller was using */
        c->holding = false;
        c->head = (c->head + 1) % SLOTS;
        c->count--;
        pthread_cond_broadcast(&c->changed);
    }
    while (c->count == 0)
        pthread_cond_wait(&c->changed, &c->lock);
    slot *s = &c->slots[c->head];
    int rc = take(s, item, torn, err, err_len);
    /* the end and errors stay where they are: every later call sees them */
    c->holding = rc == 1;
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void gpufl__gflt_chunks_close(gpufl__gflt_chunks *c)
{
    if (!c)
        return;
    if (c->threaded) {
        pthread_mutex_lock(&c->lock);
        c->stop = true;
        pthread_cond_broadcast(&c->changed);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->changed);
    }
    for (int i = 0; i < SLOTS; i++) {
        gpufl__bytebuf_free(&c->slots[i].raw);
        gpufl__gflt_decoder_free(&c->slots[i].dec);
    }
    gpufl__bytebuf_free(&c->stored);
    ZSTD_freeDCtx(c->zstd);
    free(c);
}
