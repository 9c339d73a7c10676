/*
 * Loading a .gflt file into a trace on several threads.
 *
 * The caller's thread first walks the file's chunks in order
 * (gflt_source.h, scan): the file header, the meta, strings, stop and end
 * chunks are read as the event source reads them; events chunks, nearly all
 * of the file, are only listed (offset and checked header). The list is then
 * cut into segments of consecutive chunks, and the segments are read,
 * checksummed, decompressed, decoded and turned into rows in parallel
 * (work_pool.h), each into its own segment, which trace_merge.c merges in
 * file order. A segment's string ids are the file's, so the file's string
 * table becomes the trace's as it is.
 *
 * Damage: the scan stops at a torn tail (counted) or at a damaged chunk (an
 * error); a damaged events chunk found by a decoding thread is an error
 * too. Whichever comes first in the file is the one reported, with the
 * file's name and the chunk's offset, as a reading on one thread would.
 *
 * Sizes: a chunk holds up to 16384 events; a 10 M-event file has about 600.
 * Each thread holds one chunk's payload and decoded events at a time (a few
 * MiB).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/bytebuf.h"
#include "gpufl/gpufl.h"
#include "read/gflt_chunks.h"
#include "read/gflt_decode.h"
#include "read/gflt_source.h"
#include "read/loaders.h"
#include "read/segment.h"
#include "read/trace_internal.h"
#include "read/work_pool.h"

/* What one thread reads chunks with. */
typedef struct scratch {
    gpufl__bytebuf raw, stored;
    ZSTD_DCtx *zstd;
    gpufl__gflt_decoder dec;
} scratch;

typedef struct part {
    size_t first, n; /* chunks [first, first + n) of the list */
    gpufl__segment seg;
    uint64_t skipped; /* events of types this build does not know */
    int rc;
    char err[1024];
} part;

typedef struct load {
    gpufl__input *in;
    const gpufl__gflt_events_chunk *chunks;
    part *parts;
    scratch *scratch; /* one per worker */
} load;

/* Reads, checks and decodes chunk c into p's segment. 0 or < 0 with p->err. */
static int read_chunk(load *l, part *p, scratch *s, const gpufl__gflt_events_chunk *c)
{
    int rc =
        gpufl__gflt_chunk_payload(l->in, c->offset, &c->header, &s->raw, &s->stored, &s->zstd, p->err, sizeof p->err);
    if (rc != 0)
        return rc;
    uint64_t skipped = 0;
    const char *why = "";
    rc = gpufl__gflt_decode_events(&s->dec, s->raw.p, s->raw.len, c->nstrings, &skipped, &why);
    if (rc == GPUFL_ENOMEM) {
        snprintf(p->err, sizeof p->err, "%s: out of memory decoding the chunk at offset %" PRIu64, l->in->name,
                 c->offset);
        return rc;
    }
    if (rc != 0) {
        snprintf(p->err, sizeof p->err, "%s: events chunk at offset %" PRIu64 ": %s", l->in->name, c->offset, why);
        return rc;
    }
    p->skipped += skipped;
    for (size_t i = 0; i < s->dec.n; i++)
        if (gpufl__segment_add(&p->seg, &s->dec.evs[i]) != 0) {
            snprintf(p->err, sizeof p->err, "%s: out of memory loading the trace", l->in->name);
            return GPUFL_ENOMEM;
        }
    return 0;
}

static void part_job(void *ctx, size_t job, unsigned worker)
{
    load *l = ctx;
    part *p = &l->parts[job];
    for (size_t i = 0; i < p->n && p->rc == 0; i++)
        p->rc = read_chunk(l, p, &l->scratch[worker], &l->chunks[p->first + i]);
    if (p->rc == 0 && gpufl__segment_finish(&p->seg) != 0) {
        snprintf(p->err, sizeof p->err, "%s: out of memory loading the trace", l->in->name);
        p->rc = GPUFL_ENOMEM;
    }
}

/* The threads' read buffers: freed once the chunks are read, before the
 * merge needs memory. */
static void free_scratch(load *l, unsigned nthreads)
{
    if (l->scratch)
        for (unsigned w = 0; w < nthreads; w++) {
            gpufl__bytebuf_free(&l->scratch[w].raw);
            gpufl__bytebuf_free(&l->scratch[w].stored);
            ZSTD_freeDCtx(l->scratch[w].zstd);
            gpufl__gflt_decoder_free(&l->scratch[w].dec);
        }
    free(l->scratch);
    l->scratch = NULL;
}

/* Segments per thread: more than one, so that a thread that drew short
 * segments takes more, and so that the sort of a segment's rows (a
 * temporary 36 bytes a row) stays small even on one thread; few, as each
 * is a run the merge interleaves. */
#define PARTS_PER_THREAD 4

static int load_parts(load *l, size_t nchunks, unsigned nthreads, size_t *nparts_out)
{
    size_t nparts = (size_t)nthreads * PARTS_PER_THREAD;
    if (nparts > nchunks)
        nparts = nchunks ? nchunks : 1;
    l->parts = calloc(nparts, sizeof *l->parts);
    l->scratch = calloc(nthreads, sizeof *l->scratch);
    if (!l->parts || !l->scratch)
        return GPUFL_ENOMEM;
    *nparts_out = nparts;
    for (size_t i = 0; i < nparts; i++) {
        part *p = &l->parts[i];
        p->first = nchunks * i / nparts;
        p->n = nchunks * (i + 1) / nparts - p->first;
        gpufl__segment_init(&p->seg, NULL);
    }
    gpufl__parallel_for(nthreads, nparts, part_job, l);
    free_scratch(l, nthreads);
    return 0;
}

static void free_load(load *l, size_t nparts, unsigned nthreads)
{
    if (l->parts)
        for (size_t i = 0; i < nparts; i++)
            gpufl__segment_free(&l->parts[i].seg);
    free(l->parts);
    free_scratch(l, nthreads);
}

int gpufl__gflt_load(gpufl__input *in, unsigned nthreads, gpufl_trace **out, char *err, size_t err_len)
{
    *out = NULL;
    if (err_len)
        err[0] = '\0';
    if (nthreads == 0)
        nthreads = 1;
    gpufl__event_source *src;
    int rc = gpufl__gflt_source_open_scan(in, &src, err, err_len);
    if (rc != 0)
        return rc;
    gpufl__gflt_events_chunk *chunks = NULL;
    size_t nchunks = 0, nparts = 0;
    int scan_rc = gpufl__gflt_source_scan(src, &chunks, &nchunks);
    load l = {.in = gpufl__gflt_source_input(src), .chunks = chunks};
    gpufl_trace *t = gpufl__trace_new();
    rc = t ? load_parts(&l, nchunks, nthreads, &nparts) : GPUFL_ENOMEM;
    /* the first damage in file order: in a listed chunk, else the scan's */
    for (size_t i = 0; rc == 0 && i < nparts; i++)
        if (l.parts[i].rc != 0) {
            rc = l.parts[i].rc;
            snprintf(err, err_len, "%s", l.parts[i].err);
        }
    if (rc == 0 && scan_rc != 0) {
        rc = scan_rc;
        snprintf(err, err_len, "%s", src->err);
    }
    if (rc == 0) {
        for (size_t i = 0; i < nparts; i++)
            src->skipped_records += l.parts[i].skipped;
        gpufl__strtab_free(&t->strings);
        gpufl__gflt_source_take_strings(src, &t->strings);
        gpufl__segment **segs = malloc(nparts * sizeof *segs);
        rc = segs ? 0 : GPUFL_ENOMEM;
        for (size_t i = 0; segs && i < nparts; i++)
            segs[i] = &l.parts[i].seg;
        if (rc == 0)
            rc = gpufl__trace_merge(t, segs, nparts, nthreads);
        free(segs);
        if (rc == 0)
            rc = gpufl__trace_session_facts(t, src);
        if (rc == 0)
            rc = gpufl__trace_bind(t);
        if (rc != 0)
            snprintf(err, err_len, "%s: out of memory loading the trace", src->path);
    } else if (rc == GPUFL_ENOMEM && err_len && !err[0]) {
        snprintf(err, err_len, "%s: out of memory loading the trace", src->path);
    }
    free_load(&l, nparts, nthreads);
    free(chunks);
    gpufl__source_close(src);
    if (rc != 0) {
        gpufl__trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
