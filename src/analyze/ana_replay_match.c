/*
 * Which lane of A is compared with which lane of B (ana_replay_internal.h).
 * CUPTI numbers streams as the program creates them, and a library that
 * creates a stream lazily can shift every number after it, so ids say
 * nothing across runs. Order of first use does: a deterministic program
 * starts work on its streams in the same order. So, per device, the k-th
 * stream of A to start work is paired with the k-th of B, after the pairs
 * the user named (stream_map), which leave that order. Allocation lanes
 * are per device index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_replay_internal.h"
#include "gpufl/gpufl.h"

typedef struct out_list {
    gpufl__rp_match *v;
    size_t n, cap;
} out_list;

static int add(out_list *l, const gpufl__rp_match *m)
{
    if (gpufl__ana_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v) != 0)
        return GPUFL_ENOMEM;
    l->v[l->n++] = *m;
    return 0;
}

/* The stream of side s with CUPTI id `id`, or -1; its ids listed in err. */
static long find_stream(const gpufl__rp_side *s, uint32_t id, char *err, size_t err_len)
{
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].stream == id)
            return (long)i;
    int n = snprintf(err, err_len, "--stream-map: %s has no stream %u (its streams:", s->label, id);
    for (size_t i = 0; i < s->nstreams && n > 0 && (size_t)n < err_len; i++)
        n += snprintf(err + n, err_len - (size_t)n, "%s %u", i ? "," : "", s->streams[i].stream);
    if (n > 0 && (size_t)n < err_len)
        snprintf(err + n, err_len - (size_t)n, "%s)", s->nstreams ? "" : " none");
    return -1;
}

static uint32_t max_device(const gpufl__rp_side *s)
{
    uint32_t m = (uint32_t)s->ndevs;
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].device + 1 > m)
            m = s->streams[i].device + 1;
    return m;
}

static const gpufl__rp_seq *dev_seq(const gpufl__rp_side *s, uint32_t d, uint8_t kind)
{
    if (d >= s->ndevs || !s->devs[d].present)
        return NULL;
    return kind == GPUFL__RP_LANE_ALLOCS   ? &s->devs[d].allocs
           : kind == GPUFL__RP_LANE_BLOCKS ? &s->devs[d].blocks
                                           : &s->devs[d].allocator;
}

/* The stream lanes of device d: the named pairs first, then the others by
 * order of first use. */
static int pair_streams(const gpufl__rp_side *a, const gpufl__rp_side *b, const long *map_a, const long *map_b,
                        size_t nmap, const bool *taken_a, const bool *taken_b, uint32_t d, out_list *l)
{
    for (size_t m = 0; m < nmap; m++) {
        const gpufl__rp_stream *sa = &a->streams[map_a[m]], *sb = &b->streams[map_b[m]];
        if (sa->device != d)
            continue;
        gpufl__rp_match x = {.kind = GPUFL__RP_LANE_STREAM,
                             .device = d,
                             .a = &sa->seq,
                             .b = &sb->seq,
                             .sa = sa,
                             .sb = sb,
                             .mapped = true};
        if (add(l, &x) != 0)
            return GPUFL_ENOMEM;
    }
    size_t i = 0, j = 0;
    for (;;) {
        while (i < a->nstreams && (taken_a[i] || a->streams[i].device != d))
            i++;
        while (j < b->nstreams && (taken_b[j] || b->streams[j].device != d))
            j++;
        if (i == a->nstreams && j == b->nstreams)
            return 0;
        gpufl__rp_match x = {.kind = GPUFL__RP_LANE_STREAM, .device = d};
        if (i < a->nstreams) {
            x.sa = &a->streams[i++];
            x.a = &x.sa->seq;
        }
        if (j < b->nstreams) {
            x.sb = &b->streams[j++];
            x.b = &x.sb->seq;
        }
        if (add(l, &x) != 0)
            return GPUFL_ENOMEM;
    }
}

int gpufl__rp_match_lanes(const gpufl__rp_side *a, const gpufl__rp_side *b, const gpufl__replay_options *o,
                          gpufl__rp_match **out, size_t *n, char *err, size_t err_len)
{
    *out = NULL;
    *n = 0;
    out_list l = {0};
    int rc = GPUFL_ENOMEM;
    long *map_a = calloc(o->nstream_map + 1, sizeof *map_a), *map_b = calloc(o->nstream_map + 1, sizeof *map_b);
    bool *taken_a = calloc(a->nstreams + 1, 1), *taken_b = calloc(b->nstreams + 1, 1);
    if (!map_a || !map_b || !taken_a || !taken_b)
        goto done;
    for (size_t m = 0; m < o->nstream_map; m++) {
        rc = GPUFL_EINVAL;
        if ((map_a[m] = find_stream(a, o->stream_map[m].a, err, err_len)) < 0 ||
            (map_b[m] = find_stream(b, o->stream_map[m].b, err, err_len)) < 0)
            goto done;
        if (taken_a[map_a[m]] || taken_b[map_b[m]]) {
            snprintf(err, err_len, "--stream-map: stream %u of %s is named twice",
                     taken_a[map_a[m]] ? o->stream_map[m].a : o->stream_map[m].b, taken_a[map_a[m]] ? "A" : "B");
            goto done;
        }
        taken_a[map_a[m]] = taken_b[map_b[m]] = true;
    }
    rc = GPUFL_ENOMEM;
    uint32_t nd = max_device(a) > max_device(b) ? max_device(a) : max_device(b);
    for (uint32_t d = 0; d < nd; d++) {
        if (pair_streams(a, b, map_a, map_b, o->nstream_map, taken_a, taken_b, d, &l) != 0)
            goto done;
        if (o->ignore_allocs)
            continue;
        static const uint8_t kinds[] = {GPUFL__RP_LANE_ALLOCS, GPUFL__RP_LANE_BLOCKS, GPUFL__RP_LANE_ALLOCATOR};
        for (size_t k = 0; k < sizeof kinds; k++) {
            gpufl__rp_match x = {.kind = kinds[k], .device = d};
            x.a = dev_seq(a, d, kinds[k]);
            x.b = dev_seq(b, d, kinds[k]);
            /* a lane neither side ever had an op of is no lane */
            if ((x.a && x.a->counted) || (x.b && x.b->counted))
                if (add(&l, &x) != 0)
                    goto done;
        }
    }
    *out = l.v;
    *n = l.n;
    l.v = NULL;
    rc = 0;
done:
    free(l.v);
    free(map_a);
    free(map_b);
    free(taken_a);
    free(taken_b);
    return rc;
}
