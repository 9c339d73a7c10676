/*
 * The .gflt codec: CRC32C, varints, the column layouts and the events chunk
 * encoder/decoder (src/core/crc32c.c, src/core/varint.h,
 * src/format/gflt_layout.c, src/sink/gflt_encode.c, src/read/gflt_decode.c).
 *
 * Why: a .gflt file must read back exactly what was recorded, event for
 * event and field for field, and a damaged one must never make the reader
 * read out of bounds. Checked: CRC32C against published vectors and the
 * table version against the SSE4.2 one; varint edge values and malformed
 * varints; that the layouts cover every byte of every payload except
 * padding and reserved fields (so a field added to an event and forgotten
 * here fails this test); every event type with all optional fields absent
 * and present; many random chunks; a reader meeting an event type or a
 * column it does not know (forward compatibility); and every truncation and
 * many corruptions of a chunk (errors, never crashes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/crc32c.h"
#include "core/intern.h"
#include "core/varint.h"
#include "event_gen.h"
#include "format/gflt_layout.h"
#include "read/gflt_decode.h"
#include "read/strtab.h"
#include "sink/gflt_encode.h"

/* ---- CRC32C and varints --------------------------------------------------- */

static void test_crc32c_vectors(void **state)
{
    (void)state;
    /* RFC 3720 (iSCSI) B.4 and the "123456789" check value */
    uint8_t buf[32];
    assert_int_equal(gpufl__crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(gpufl__crc32c(0, "", 0), 0);
    memset(buf, 0, sizeof buf);
    assert_int_equal(gpufl__crc32c(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xff, sizeof buf);
    assert_int_equal(gpufl__crc32c(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    assert_int_equal(gpufl__crc32c(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    assert_int_equal(gpufl__crc32c(0, buf, 32), 0x113FDB5Cu);
}

/* The hardware and table versions agree at every length and alignment, and
 * a checksum can be continued piece by piece. */
static void test_crc32c_sw_hw(void **state)
{
    (void)state;
    static uint8_t data[4096 + 16];
    uint64_t rng = 7;
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)tu_rand(&rng);
    for (size_t align = 0; align < 8; align++)
        for (size_t n = 0; n < 600; n += 1 + n / 16) {
            uint32_t a = gpufl__crc32c(0, data + align, n), b = gpufl__crc32c_sw(0, data + align, n);
            if (a != b)
                fail_msg("length %zu at +%zu: %08x vs %08x", n, align, a, b);
            size_t cut = n / 3;
            assert_int_equal(gpufl__crc32c(gpufl__crc32c(0, data + align, cut), data + align + cut, n - cut), a);
        }
}

static void test_varints(void **state)
{
    (void)state;
    static const uint64_t values[] = {0,          1,         127, 128, 255, 16383, 16384, 1ull << 32, (1ull << 63) - 1,
                                      1ull << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[GFL_VARINT_MAX];
        uint8_t *end = gpufl__put_varint(buf, values[i]);
        size_t len = (size_t)(end - buf), expect = 1;
        for (uint64_t v = values[i]; v >= 128; v >>= 7)
            expect++;
        assert_int_equal(len, expect);
        const uint8_t *p = buf;
        uint64_t back = 0;
        assert_int_equal(gpufl__get_varint(&p, end, &back), 0);
        assert_true(back == values[i]);
        assert_ptr_equal(p, end);
        /* every proper prefix is truncated */
        for (size_t cut = 0; cut < len; cut++) {
            p = buf;
            assert_int_equal(gpufl__get_varint(&p, buf + cut, &back), -1);
            assert_ptr_equal(p, buf);
        }
    }
    /* 11 bytes, or a 10th byte beyond 64 bits */
    uint8_t eleven[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    const uint8_t *p = eleven;
    uint64_t v;
    assert_int_equal(gpufl__get_varint(&p, eleven + 11, &v), -1);
    uint8_t big[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    p = big;
    assert_int_equal(gpufl__get_varint(&p, big + 10, &v), -1);
    static const int64_t s[] = {0, -1, 1, -2, 2, INT64_MIN, INT64_MAX};
    static const uint64_t z[] = {0, 1, 2, 3, 4, UINT64_MAX, UINT64_MAX - 1};
    for (int i = 0; i < 7; i++) {
        assert_true(gpufl__zigzag(s[i]) == z[i]);
        assert_true(gpufl__unzigzag(z[i]) == s[i]);
    }
}

/* ---- the layouts ---------------------------------------------------------- */

#define END_OF(m) (offsetof(gfl_event, m) + sizeof(((gfl_event *)0)->m))
// clang-format off
#define RANGE_OF(m) {offsetof(gfl_event, m), END_OF(m)}
// clang-format on

typedef struct range {
    size_t from, to;
} range;

/* Bytes of each event a layout need not carry: the payload's tail padding
 * (from the end of its last member) and its reserved members. */
static void expected_gaps(uint8_t type, range *gaps, int *n)
{
    *n = 0;
#define TAIL(m)                                                                                                        \
    gaps[(*n)++] = (range) { END_OF(m), GFL_EVENT_SIZE }
    switch (type) {
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_SCOPE_END:
    case GFL_EV_CRASH_SCOPE: TAIL(u.scope.depth); break;
    case GFL_EV_SYSTEM_START:
    case GFL_EV_SYSTEM_STOP: TAIL(u.window.open_windows); break;
    case GFL_EV_HOST_METRICS: TAIL(u.host.proc_rss_bytes); break;
    case GFL_EV_DEVICE_METRICS:
        gaps[(*n)++] = (range)RANGE_OF(u.dev.reserved0);
        TAIL(u.dev.mem_free_bytes);
        break;
    case GFL_EV_KERNEL: TAIL(u.kernel.external_kind); break;
    case GFL_EV_MEMCPY:
        gaps[(*n)++] = (range)RANGE_OF(u.memcpy.reserved0);
        TAIL(u.memcpy.dst_device);
        break;
    case GFL_EV_MEMSET: TAIL(u.memset.mem_kind); break;
    case GFL_EV_SYNC: TAIL(u.sync.sync_kind); break;
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: TAIL(u.mem.is_async); break;
    case GFL_EV_DROPPED: TAIL(u.dropped.channel); break;
    case GFL_EV_LOG: TAIL(u.log.level); break;
    case GFL_EV_DEVICE_INFO: TAIL(u.info.pcie_max_width); break;
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK:
        gaps[(*n)++] = (range)RANGE_OF(u.nvtx.reserved0);
        TAIL(u.nvtx.seq);
        break;
    case GFL_EV_GRAPH_LAUNCH: TAIL(u.graph.nvtx); break;
    case GFL_EV_CRASH: TAIL(u.crash.scopes_lost); break;
    case GFL_EV_ENGINE: TAIL(u.engine.reason); break;
    case GFL_EV_TRIGGER: TAIL(u.trigger.outcome); break;
    case GFL_EV_TRACE_WINDOW: TAIL(u.trace_window.index); break;
    case GFL_EV_ALLOCATOR: TAIL(u.allocator.ooms); break;
    case GFL_EV_PC_SAMPLE:
        gaps[(*n)++] = (range)RANGE_OF(u.pc.reserved);
        TAIL(u.pc.stalls);
        break;
    case GFL_EV_PM_SAMPLE: TAIL(u.pm_sample.metric); break;
    case GFL_EV_RANGE_METRIC: TAIL(u.range_metric.range); break;
    case GFL_EV_SASS_METRIC: TAIL(u.sass.valid); break;
    case GFL_EV_CLOCK: TAIL(u.clock.ntp_status); break;
    case GFL_EV_NCCL_COLL: TAIL(u.nccl.abi); break;
    case GFL_EV_STACK:
    case GFL_EV_CRASH_STACK:
        gaps[(*n)++] = (range)RANGE_OF(u.stack.reserved);
        TAIL(u.stack.frames[GFL_STACK_FRAMES_PER_EVENT - 1].offset);
        break;
    default:
        fail_msg("event type %u (%s) is new: add it here and to the .gflt layout", type, gpufl__event_type_name(type));
    }
#undef TAIL
}

/* Every byte of every event is carried by the layout, except the expected
 * gaps; and the layout tables are well formed. */
static void test_layouts_cover_events(void **state)
{
    (void)state;
    for (unsigned t = 1; t < GFL_EV_TYPE_COUNT; t++) {
        if (!strcmp(gpufl__event_type_name((uint8_t)t), "unknown"))
            continue; /* a number kept for another branch's type: no name, no layout */
        const gpufl__gflt_layout *l = gpufl__gflt_layout_of((uint8_t)t);
        if (!l && !strcmp(gpufl__event_type_name((uint8_t)t), "unknown"))
            continue; /* a number held for another branch's type (core/event.h) */
        if (!l)
            fail_msg("event type %u (%s) has no .gflt layout", t, gpufl__event_type_name((uint8_t)t));
        assert_true(l->nfields <= GFLT_MAX_FIELDS);
        uint8_t covered[GFL_EVENT_SIZE] = {1}; /* byte 0: the type, in the type column */
        bool seen_device = false, seen_stream = false, has_pred = false;
        for (unsigned k = 0; k < l->nfields; k++) {
            const gpufl__gflt_field *f = &l->fields[k];
            assert_true(f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
            assert_true(f->off + f->size <= GFL_EVENT_SIZE);
            assert_false((f->flags & GFLT_OPT) && (f->flags & GFLT_PRED));
            for (unsigned b = 0; b < f->size; b++) {
                if (covered[f->off + b] && f->off + b)
                    fail_msg("%s: byte %u is in two columns", gpufl__event_type_name((uint8_t)t), f->off + b);
                covered[f->off + b] = 1;
            }
            if (f->codec == GFLT_SPAN) {
                for (unsigned b = 0; b < 8; b++)
                    covered[f->aux + b] = 1;
                assert_true(seen_device && seen_stream); /* decoded before the span needs them */
            }
            if (f->codec == GFLT_REF) {
                /* refers to a timestamp already decoded */
                bool found = false;
                for (unsigned j = 0; j < k; j++)
                    found |=
                        (l->fields[j].off == f->aux && l->fields[j].size == 8) ||
                        (l->fields[j].codec == GFLT_SPAN && (l->fields[j].off == f->aux || l->fields[j].aux == f->aux));
                if (!found)
                    fail_msg("%s: column %u refers to a field not decoded before it",
                             gpufl__event_type_name((uint8_t)t), k);
            }
            seen_device |= f->off == offsetof(gfl_event, h.device);
            for (unsigned j = 0; j < l->nfields; j++)
                seen_stream |= f->off == l->fields[j].aux2 && l->fields[j].codec == GFLT_SPAN && f->size == 4;
            has_pred |= (f->flags & GFLT_PRED) != 0;
        }
        if (has_pred)
            assert_true(l->key != 0);
        range gaps[4];
        int ngaps;
        expected_gaps((uint8_t)t, gaps, &ngaps);
        for (unsigned b = 0; b < GFL_EVENT_SIZE; b++) {
            bool gap = false;
            for (int g = 0; g < ngaps; g++)
                gap |= b >= gaps[g].from && b < gaps[g].to;
            if (!covered[b] && !gap)
                fail_msg("%s: byte %u of the event is in no .gflt column", gpufl__event_type_name((uint8_t)t), b);
            if (covered[b] && gap)
                fail_msg("%s: byte %u is padding or reserved, yet in a column", gpufl__event_type_name((uint8_t)t), b);
        }
    }
    assert_null(gpufl__gflt_layout_of(GFL_EV_NONE));
    assert_null(gpufl__gflt_layout_of(GFL_EV_TYPE_COUNT));
}

/* ---- encode and decode ---------------------------------------------------- */

static uint32_t names[6];

static int setup_names(void **state)
{
    (void)state;
    static const char *const text[6] = {
        "", "ampere_sgemm_128x64_nn", "forward", "λ \"quoted\"\n", "/usr/lib/libtorch_cuda.so", "aten::addmm"};
    for (int i = 0; i < 6; i++)
        names[i] = gpufl__intern(text[i]);
    return 0;
}

/* The file's string table as the strings payload gives it. */
static void read_strings(const gpufl__bytebuf *payload, gpufl__strtab *t)
{
    const uint8_t *p = payload->p, *end = p + payload->len;
    uint64_t first = 0, count = 0;
    assert_int_equal(gpufl__get_varint(&p, end, &first), 0);
    assert_int_equal(gpufl__get_varint(&p, end, &count), 0);
    assert_int_equal(first, t->n);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t len = 0;
        assert_int_equal(gpufl__get_varint(&p, end, &len), 0);
        assert_true(len <= (uint64_t)(end - p));
        assert_int_equal(gpufl__strtab_append(t, (const char *)p, len), 0);
        p += len;
    }
    assert_ptr_equal(p, end);
}

typedef struct codec {
    gpufl__gflt_encoder enc;
    gpufl__gflt_decoder dec;
    gpufl__strtab file_strings;
    gpufl__bytebuf payload, strings;
} codec;

static void codec_init(codec *c)
{
    memset(c, 0, sizeof *c);
    gpufl__gflt_encoder_init(&c->enc);
    assert_int_equal(gpufl__strtab_init(&c->file_strings), 0);
}

static void codec_free(codec *c)
{
    gpufl__gflt_encoder_free(&c->enc);
    gpufl__gflt_decoder_free(&c->dec);
    gpufl__strtab_free(&c->file_strings);
    gpufl__bytebuf_free(&c->payload);
    gpufl__bytebuf_free(&c->strings);
}

/* Encodes evs as one chunk, decodes it, and checks every event. */
static void roundtrip(codec *c, const gfl_event *evs, size_t n)
{
    c->payload.len = c->strings.len = 0;
    assert_int_equal(gpufl__gflt_encode_events(&c->enc, evs, n, &c->payload), 0);
    assert_int_equal(gpufl__gflt_encode_strings(&c->enc, &gpufl__intern_lookup, &c->strings), 0);
    read_strings(&c->strings, &c->file_strings);
    uint64_t skipped;
    const char *why = NULL;
    int rc = gpufl__gflt_decode_events(&c->dec, c->payload.p, c->payload.len, c->file_strings.n, &skipped, &why);
    if (rc != 0)
        fail_msg("decode: %d %s", rc, why);
    assert_int_equal(skipped, 0);
    assert_int_equal(c->dec.n, n);
    gpufl__string_lookup file = gpufl__strtab_lookup(&c->file_strings);
    for (size_t i = 0; i < n; i++) {
        const char *diff = tu_event_diff(&evs[i], &gpufl__intern_lookup, &c->dec.evs[i], &file);
        if (diff)
            fail_msg("event %zu: %s", i, diff);
        /* and nothing else: padding and reserved bytes come back 0 */
        gfl_event copy = c->dec.evs[i];
        range gaps[4];
        int ngaps;
        expected_gaps(copy.h.type, gaps, &ngaps);
        for (int g = 0; g < ngaps; g++)
            for (size_t b = gaps[g].from; b < gaps[g].to; b++)
                assert_int_equal(((uint8_t *)&copy)[b], 0);
    }
}

/* Every type, with all optional fields absent, then all present. */
static void test_every_type(void **state)
{
    (void)state;
    codec c;
    codec_init(&c);
    uint64_t rng = 42;
    for (int pass = 0; pass < 2; pass++) {
        gfl_event evs[3 * GFL_EV_TYPE_COUNT];
        size_t n = 0;
        for (unsigned t = 1; t < GFL_EV_TYPE_COUNT; t++)
            for (int i = 0; i < 3 && tu_event_type_built(t); i++)
                tu_random_event(&rng, (uint8_t)t, pass == 0 ? 1.0 : 0.0, names, 6, &evs[n++]);
        roundtrip(&c, evs, n);
        /* one type alone in a chunk, too */
        for (size_t k = 0; k < n; k += 3)
            roundtrip(&c, &evs[k], 3);
    }
    /* extremes: all-ones and all-zero payloads */
    for (unsigned t = 1; t < GFL_EV_TYPE_COUNT; t++) {
        if (!tu_event_type_built(t))
            continue;
        gfl_event ev[2];
        tu_random_event(&rng, (uint8_t)t, 0.0, names, 6, &ev[0]);
        tu_random_event(&rng, (uint8_t)t, 1.0, names, 6, &ev[1]);
        const gpufl__gflt_layout *l = gpufl__gflt_layout_of(ev[0].h.type); /* the stand-in's, for a held number */
        for (unsigned k = 0; k < l->nfields; k++)
            if (l->fields[k].codec != GFLT_STR)
                memset((uint8_t *)&ev[0] + l->fields[k].off, 0xff, l->fields[k].size);
        for (unsigned k = 0; k < l->nfields; k++)
            if (!(l->fields[k].flags & GFLT_OPT) && l->fields[k].codec != GFLT_STR)
                memset((uint8_t *)&ev[1] + l->fields[k].off, 0, l->fields[k].size);
        roundtrip(&c, ev, 2);
    }
    codec_free(&c);
}

/* Many chunks of random events of random types, with the regularities the
 * predictions feed on (kernels relaunched with one configuration, back to
 * back on a few streams) mixed with noise. */
static void test_random_chunks(void **state)
{
    (void)state;
    codec c;
    codec_init(&c);
    uint64_t rng = 1234567;
    gfl_event *evs = malloc(6000 * sizeof *evs);
    assert_non_null(evs);
    gfl_event templates[4];
    for (int i = 0; i < 4; i++)
        tu_random_event(&rng, GFL_EV_KERNEL, 0.5, names, 6, &templates[i]);
    for (int chunk = 0; chunk < 30; chunk++) {
        size_t n = 1 + tu_rand(&rng) % 6000;
        uint64_t ts = 5000000000ull + tu_rand(&rng) % 1000;
        for (size_t i = 0; i < n; i++) {
            if (tu_rand(&rng) % 3) {
                evs[i] = templates[tu_rand(&rng) % 4];
                evs[i].u.kernel.stream = (uint32_t)(tu_rand(&rng) % 3);
                evs[i].h.ts = ts += tu_rand(&rng) % 3000;
                evs[i].u.kernel.end_ts = ts + tu_rand(&rng) % 50000;
                evs[i].u.kernel.correlation = (uint32_t)i;
            } else {
                uint8_t type = (uint8_t)(1 + tu_rand(&rng) % (GFL_EV_TYPE_COUNT - 1));
                tu_random_event(&rng, type, 0.5, names, 6, &evs[i]);
            }
        }
        roundtrip(&c, evs, n);
    }
    free(evs);
    codec_free(&c);
}

/* ---- damaged and foreign payloads ----------------------------------------- */

/* Every prefix of a payload is an error, and no corruption of one makes
 * the decoder read or write out of bounds (ASan watches). */
static void test_damaged_payloads(void **state)
{
    (void)state;
    codec c;
    codec_init(&c);
    uint64_t rng = 99;
    gfl_event evs[60];
    for (size_t i = 0; i < 60; i++)
        tu_random_event(&rng, (uint8_t)(1 + i % (GFL_EV_TYPE_COUNT - 1)), 0.3, names, 6, &evs[i]);
    roundtrip(&c, evs, 60);
    size_t len = c.payload.len;
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    uint64_t skipped;
    const char *why;
    for (size_t cut = 0; cut < len; cut++) {
        memcpy(copy, c.payload.p, cut);
        int rc = gpufl__gflt_decode_events(&c.dec, copy, cut, c.file_strings.n, &skipped, &why);
        if (rc != GPUFL_ECORRUPT)
            fail_msg("a payload cut to %zu of %zu bytes decoded (%d)", cut, len, rc);
    }
    for (size_t i = 0; i < len * 8; i += 1 + tu_rand(&rng) % 5) {
        memcpy(copy, c.payload.p, len);
        copy[i / 8] ^= (uint8_t)(1u << (i % 8));
        int rc = gpufl__gflt_decode_events(&c.dec, copy, len, c.file_strings.n, &skipped, &why);
        assert_true(rc == 0 || rc == GPUFL_ECORRUPT);
    }
    /* string ids the file has not defined are an error */
    int rc = gpufl__gflt_decode_events(&c.dec, c.payload.p, len, 1, &skipped, &why);
    assert_int_equal(rc, GPUFL_ECORRUPT);
    free(copy);
    codec_free(&c);
}

/* A writer newer than this reader: an event type it does not know is
 * skipped and counted, and columns past the ones it knows are ignored; a
 * writer older than it (fewer columns) leaves the missing fields 0. */
static void test_foreign_payloads(void **state)
{
    (void)state;
    codec c;
    codec_init(&c);
    uint64_t rng = 5;
    gfl_event evs[2];
    tu_random_event(&rng, GFL_EV_LOG, 0.0, names, 6, &evs[0]);
    tu_random_event(&rng, GFL_EV_LOG, 0.0, names, 6, &evs[1]);
    roundtrip(&c, evs, 2);
    /* rebuild the payload by hand: 3 events, log, an unknown type 200, log;
     * the log section gets one extra column at its end */
    const uint8_t *p = c.payload.p, *end = p + c.payload.len;
    uint64_t n = 0, seclen = 0;
    assert_int_equal(gpufl__get_varint(&p, end, &n), 0);
    assert_int_equal(n, 2);
    p += 2;
    assert_int_equal(gpufl__get_varint(&p, end, &seclen), 0);
    gpufl__bytebuf b = {0};
    uint8_t types[3] = {GFL_EV_LOG, 200, GFL_EV_LOG};
    assert_int_equal(gpufl__bytebuf_varint(&b, 3), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, types, 3), 0);
    static const uint8_t extra_column[] = {2, 0x7f, 0x7f};
    assert_int_equal(gpufl__bytebuf_varint(&b, seclen + sizeof extra_column), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, p, seclen), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, extra_column, sizeof extra_column), 0);
    static const uint8_t unknown_section[] = {4, 3, 1, 2, 3};
    assert_int_equal(gpufl__bytebuf_append(&b, unknown_section, sizeof unknown_section), 0);
    uint64_t skipped;
    const char *why;
    assert_int_equal(gpufl__gflt_decode_events(&c.dec, b.p, b.len, c.file_strings.n, &skipped, &why), 0);
    assert_int_equal(skipped, 1);
    assert_int_equal(c.dec.n, 2);
    gpufl__string_lookup file = gpufl__strtab_lookup(&c.file_strings);
    for (int i = 0; i < 2; i++)
        assert_null(tu_event_diff(&evs[i], &gpufl__intern_lookup, &c.dec.evs[i], &file));

    /* an older writer: the log section holds only its first two columns */
    b.len = 0;
    assert_int_equal(gpufl__bytebuf_varint(&b, 2), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, types, 1), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, types, 1), 0);
    const uint8_t *q = p;
    uint64_t l1 = 0, l2 = 0;
    assert_int_equal(gpufl__get_varint(&q, end, &l1), 0);
    q += l1;
    assert_int_equal(gpufl__get_varint(&q, end, &l2), 0);
    q += l2;
    assert_int_equal(gpufl__bytebuf_varint(&b, (uint64_t)(q - p)), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, p, (size_t)(q - p)), 0);
    assert_int_equal(gpufl__gflt_decode_events(&c.dec, b.p, b.len, c.file_strings.n, &skipped, &why), 0);
    assert_int_equal(c.dec.n, 2);
    const gpufl__gflt_layout *l = gpufl__gflt_layout_of(GFL_EV_LOG);
    for (int i = 0; i < 2; i++)
        for (unsigned k = 2; k < l->nfields; k++) {
            uint64_t v = 0;
            memcpy(&v, (uint8_t *)&c.dec.evs[i] + l->fields[k].off, l->fields[k].size);
            assert_int_equal(v, 0);
        }
    gpufl__bytebuf_free(&b);
    codec_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_vectors),   cmocka_unit_test(test_crc32c_sw_hw),
        cmocka_unit_test(test_varints),          cmocka_unit_test(test_layouts_cover_events),
        cmocka_unit_test(test_every_type),       cmocka_unit_test(test_random_chunks),
        cmocka_unit_test(test_damaged_payloads), cmocka_unit_test(test_foreign_payloads),
    };
    return cmocka_run_group_tests(tests, setup_names, NULL);
}
