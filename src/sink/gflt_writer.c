/*
 * .gflt file writer (see gflt_writer.h; byte layout in docs/FORMAT.md).
 */
#include "sink/gflt_writer.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/crc32c.h"
#include "format/gflt_format.h"
#include "format/gflt_layout.h"
#include "gpufl/gpufl.h"

#define MIN_COMPRESS 64 /* smaller payloads are stored as they are */

/* The latest time an event covers: its end for intervals, else its start. */
static uint64_t event_last_ns(const gfl_event *ev)
{
    uint64_t end = 0;
    switch (ev->h.type) {
    case GFL_EV_KERNEL: end = ev->u.kernel.end_ts; break;
    case GFL_EV_MEMCPY: end = ev->u.memcpy.end_ts; break;
    case GFL_EV_MEMSET: end = ev->u.memset.end_ts; break;
    case GFL_EV_SYNC: end = ev->u.sync.end_ts; break;
    case GFL_EV_NVTX_RANGE: end = ev->u.nvtx.end_ts; break;
    case GFL_EV_GRAPH_LAUNCH: end = ev->u.graph.end_ts; break;
    default: break;
    }
    return end > ev->h.ts ? end : ev->h.ts;
}

/* ---- chunks ------------------------------------------------------------- */

static int remember(gpufl__gflt_writer *w, uint8_t type, uint32_t count, uint64_t min_ts, uint64_t max_ts)
{
    if (w->nindex == w->index_cap) {
        size_t cap = w->index_cap ? w->index_cap * 2 : 64;
        gpufl__gflt_index_entry *p = realloc(w->index, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        w->index = p;
        w->index_cap = cap;
    }
    w->index[w->nindex++] = (gpufl__gflt_index_entry){w->offset, type, count, min_ts, max_ts};
    return 0;
}

/* Frames w->raw as a chunk of `type` (compressed when that pays) and writes
 * it in one call. Returns 0 or a negative gpufl_err; on failure writing has
 * stopped. */
static int write_chunk(gpufl__gflt_writer *w, uint8_t type, bool final)
{
    if (w->stopped && !final)
        return GPUFL_EIO;
    const uint8_t *payload = w->raw.p;
    size_t stored = w->raw.len;
    uint8_t flags = 0;
    w->chunk.len = 0;
    size_t bound = ZSTD_compressBound(w->raw.len);
    if (gpufl__bytebuf_reserve(&w->chunk, GFLT_CHUNK_HEADER_SIZE + bound) != 0)
        return GPUFL_ENOMEM;
    uint8_t *dst = w->chunk.p + GFLT_CHUNK_HEADER_SIZE;
    if (w->zstd && w->raw.len >= MIN_COMPRESS) {
        size_t z = ZSTD_compressCCtx(w->zstd, dst, bound, w->raw.p, w->raw.len, w->zstd_level);
        if (!ZSTD_isError(z) && z < w->raw.len) {
            payload = dst;
            stored = z;
            flags = GFLT_FLAG_ZSTD;
        }
    }
    if (payload != dst)
        memcpy(dst, payload, stored);
    gpufl__gflt_chunk_header h = {type, flags, (uint32_t)stored, (uint32_t)w->raw.len, gpufl__crc32c(0, dst, stored)};
    gpufl__gflt_chunk_header_put(w->chunk.p, &h);
    size_t n = GFLT_CHUNK_HEADER_SIZE + stored;
    int rc = w->out.write(w->out.ctx, w->chunk.p, n, final);
    if (rc != 0) {
        w->stopped = true;
        return rc;
    }
    w->offset += n;
    return 0;
}

static int put_str(gpufl__bytebuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > GFLT_MAX_STRING_BYTES)
        n = GFLT_MAX_STRING_BYTES;
    return gpufl__bytebuf_varint(b, n) || gpufl__bytebuf_append(b, s, n) ? GPUFL_ENOMEM : 0;
}

static int meta_chunk(gpufl__gflt_writer *w, const gpufl__session_meta *m)
{
    gpufl__bytebuf *b = &w->raw;
    b->len = 0;
    if (gpufl__bytebuf_varint(b, m->format_version) || gpufl__bytebuf_varint(b, m->start_ns) ||
        gpufl__bytebuf_varint(b, m->start_wall_ns) || gpufl__bytebuf_varint(b, gpufl__zigzag(m->pid)) ||
        put_str(b, m->session_id) || put_str(b, m->app_name) || put_str(b, m->host) || put_str(b, m->gpufl_version))
        return GPUFL_ENOMEM;
    return write_chunk(w, GFLT_CHUNK_META, true);
}

/* ---- public ------------------------------------------------------------- */

/* Frees all w owns and zeroes it; open's failure path and close share it. */
static void release(gpufl__gflt_writer *w)
{
    gpufl__gflt_encoder_free(&w->enc);
    ZSTD_freeCCtx(w->zstd);
    free(w->events);
    free(w->index);
    gpufl__bytebuf_free(&w->raw);
    gpufl__bytebuf_free(&w->chunk);
    memset(w, 0, sizeof *w);
}

int gpufl__gflt_writer_open(gpufl__gflt_writer *w, gpufl__gflt_out out, const gpufl__string_lookup *names,
                            const gpufl__session_meta *meta, size_t chunk_events, int zstd_level)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->names = names;
    w->chunk_events = chunk_events ? chunk_events : GFLT_DEFAULT_CHUNK_EVENTS;
    if (w->chunk_events > GFLT_MAX_CHUNK_EVENTS)
        w->chunk_events = GFLT_MAX_CHUNK_EVENTS;
    w->zstd_level = zstd_level < 0 ? GFLT_DEFAULT_ZSTD_LEVEL : zstd_level;
    gpufl__gflt_encoder_init(&w->enc);
    w->events = malloc(w->chunk_events * sizeof *w->events);
    int rc = GPUFL_ENOMEM;
    if (!w->events)
        goto fail;
    if (w->zstd_level > 0 && !(w->zstd = ZSTD_createCCtx()))
        goto fail;
    uint8_t header[GFLT_FILE_HEADER_SIZE];
    gpufl__gflt_file_header_put(header);
    /* The header and the meta chunk are written as closing chunks are (a
     * disk budget keeps a reserve for them): even a session that starts on
     * a full disk leaves a file that says whose it is and why it stopped. */
    if ((rc = out.write(out.ctx, header, sizeof header, true)) != 0)
        goto fail;
    w->offset = sizeof header;
    if ((rc = meta_chunk(w, meta)) != 0)
        goto fail;
    return 0;
fail:
    release(w);
    return rc;
}

static void lose_buffered(gpufl__gflt_writer *w)
{
    for (size_t i = 0; i < w->n; i++)
        w->lost[gpufl__event_route(&w->events[i])]++;
    w->n = 0;
}

int gpufl__gflt_writer_flush(gpufl__gflt_writer *w)
{
    if (w->n == 0)
        return w->stopped ? GPUFL_EIO : 0;
    if (w->stopped) {
        lose_buffered(w);
        return GPUFL_EIO;
    }
    uint64_t min_ts = UINT64_MAX, max_ts = 0;
    for (size_t i = 0; i < w->n; i++) {
        uint64_t last = event_last_ns(&w->events[i]);
        if (w->events[i].h.ts < min_ts)
            min_ts = w->events[i].h.ts;
        if (last > max_ts)
            max_ts = last;
    }
    w->raw.len = 0;
    int rc = gpufl__gflt_encode_events(&w->enc, w->events, w->n, &w->raw);
    if (rc == 0 && gpufl__gflt_strings_pending(&w->enc)) {
        /* the strings go first, in their own chunk: encode them after the
         * events (which is when they are known) into the chunk buffer */
        gpufl__bytebuf events = w->raw;
        w->raw = (gpufl__bytebuf){0};
        uint32_t count = (uint32_t)w->enc.npending;
        rc = gpufl__gflt_encode_strings(&w->enc, w->names, &w->raw);
        if (rc == 0 && (rc = remember(w, GFLT_CHUNK_STRINGS, count, 0, 0)) == 0)
            rc = write_chunk(w, GFLT_CHUNK_STRINGS, false);
        gpufl__bytebuf_free(&w->raw);
        w->raw = events;
    }
    if (rc == 0 && (rc = remember(w, GFLT_CHUNK_EVENTS, (uint32_t)w->n, min_ts, max_ts)) == 0)
        rc = write_chunk(w, GFLT_CHUNK_EVENTS, false);
    if (rc != 0) {
        w->stopped = true;
        lose_buffered(w);
        return GPUFL_EIO;
    }
    w->events_written += w->n;
    w->n = 0;
    return 0;
}

int gpufl__gflt_writer_add(gpufl__gflt_writer *w, const gfl_event *ev)
{
    if (!gpufl__gflt_layout_of(ev->h.type))
        return GPUFL_EINVAL;
    if (w->stopped) {
        w->lost[gpufl__event_route(ev)]++;
        return GPUFL_EIO;
    }
    w->events[w->n++] = *ev;
    if (w->n == w->chunk_events)
        return gpufl__gflt_writer_flush(w);
    return 0;
}

int gpufl__gflt_writer_put_chunk(gpufl__gflt_writer *w, const void *chunk, size_t n, const gpufl__gflt_index_entry *e)
{
    if (w->stopped)
        return GPUFL_EIO;
    int rc = remember(w, e->type, e->count, e->min_ts, e->max_ts);
    if (rc == 0 && (rc = w->out.write(w->out.ctx, chunk, n, false)) != 0)
        w->stopped = true;
    if (rc != 0)
        return rc;
    w->offset += n;
    if (e->type == GFLT_CHUNK_EVENTS)
        w->events_written += e->count;
    return 0;
}

static void stop_chunk(gpufl__gflt_writer *w, uint32_t reason, uint64_t ts_ns, const char *detail)
{
    gpufl__bytebuf *b = &w->raw;
    b->len = 0;
    w->stop_written = true;
    if (gpufl__bytebuf_varint(b, ts_ns) || gpufl__bytebuf_varint(b, reason) || put_str(b, detail))
        return;
    (void)write_chunk(w, GFLT_CHUNK_STOP, true);
}

void gpufl__gflt_writer_stop(gpufl__gflt_writer *w, uint32_t reason, uint64_t ts_ns, const char *detail)
{
    lose_buffered(w);
    w->stopped = true;
    if (!w->stop_written)
        stop_chunk(w, reason, ts_ns, detail);
}

static int end_chunk(gpufl__gflt_writer *w, const gpufl__session_meta *m)
{
    gpufl__bytebuf *b = &w->raw;
    b->len = 0;
    if (gpufl__bytebuf_varint(b, m->end_ns) || gpufl__bytebuf_varint(b, m->end_wall_ns))
        return GPUFL_ENOMEM;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        if (gpufl__bytebuf_varint(b, m->lost[ch]))
            return GPUFL_ENOMEM;
    /* appended: the final loss counts, for the channels that have them */
    uint64_t mask = 0;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        mask |= (uint64_t)m->has_dropped[ch] << ch;
    if (mask) {
        if (gpufl__bytebuf_varint(b, mask) || gpufl__bytebuf_varint(b, GFL_DROP_REASON_COUNT))
            return GPUFL_ENOMEM;
        for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
            for (int r = 0; m->has_dropped[ch] && r < GFL_DROP_REASON_COUNT; r++)
                if (gpufl__bytebuf_varint(b, m->dropped[ch][r]))
                    return GPUFL_ENOMEM;
    }
    return write_chunk(w, GFLT_CHUNK_END, true);
}

static int index_and_trailer(gpufl__gflt_writer *w)
{
    gpufl__bytebuf *b = &w->raw;
    b->len = 0;
    if (gpufl__bytebuf_varint(b, w->nindex))
        return GPUFL_ENOMEM;
    uint64_t prev_offset = 0, prev_min = 0;
    for (size_t i = 0; i < w->nindex; i++) {
        const gpufl__gflt_index_entry *e = &w->index[i];
        if (gpufl__bytebuf_varint(b, e->type) || gpufl__bytebuf_varint(b, e->offset - prev_offset) ||
            gpufl__bytebuf_varint(b, e->count) ||
            gpufl__bytebuf_varint(b, gpufl__zigzag((int64_t)(e->min_ts - prev_min))) ||
            gpufl__bytebuf_varint(b, e->max_ts - e->min_ts))
            return GPUFL_ENOMEM;
        prev_offset = e->offset;
        if (e->type == GFLT_CHUNK_EVENTS)
            prev_min = e->min_ts;
    }
    uint64_t index_offset = w->offset;
    int rc = write_chunk(w, GFLT_CHUNK_INDEX, false);
    if (rc != 0)
        return rc;
    b->len = 0;
    if (gpufl__bytebuf_reserve(b, GFLT_TRAILER_PAYLOAD) != 0)
        return GPUFL_ENOMEM;
    gpufl__le64(b->p, index_offset);
    b->len = GFLT_TRAILER_PAYLOAD;
    /* 8 bytes, under write_chunk's compression threshold: the trailer is
     * always stored plain, so a reader finds it at a fixed distance from the
     * end of the file */
    return write_chunk(w, GFLT_CHUNK_TRAILER, false);
}

int gpufl__gflt_writer_close(gpufl__gflt_writer *w, const gpufl__session_meta *meta)
{
    int rc = gpufl__gflt_writer_flush(w) == 0 ? 0 : GPUFL_EIO;
    if (meta && meta->stop_reason && !w->stop_written)
        stop_chunk(w, meta->stop_reason, meta->stopped_at_ns, meta->stop_detail);
    if (meta && meta->ended && end_chunk(w, meta) != 0)
        rc = GPUFL_EIO;
    if (!w->stopped && index_and_trailer(w) != 0)
        rc = GPUFL_EIO;
    release(w);
    return rc;
}
