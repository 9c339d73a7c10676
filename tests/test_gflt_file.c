/*
 * .gflt files: the writer (src/sink/gflt_writer.c) and the reader
 * (src/read/gflt_source.c, gflt_chunks.c) together, through whole files.
 *
 * Why: a .gflt file has to survive what happens to files: a writer killed
 * mid-chunk (the file ends inside a chunk), bytes flipped on disk or in
 * transit, a file system that leaves zeros after a power cut, a newer
 * writer's chunks and versions. Checked: meta, strings, events, stop and
 * end read back exactly, compressed or not, in one chunk or thousands
 * (read ahead on the helper thread for big files); the index and trailer
 * point where they should; a file cut at every byte of its last chunk reads
 * up to the chunk before and says how many bytes it skipped; a flipped byte
 * anywhere is an error that names the file and the chunk's offset (or is
 * harmless: never wrong data without an error, never a crash); zeros after
 * the last chunk are a torn tail; unknown chunk types are skipped; a newer
 * version and a foreign file are refused with a reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "core/varint.h"
#include "event_gen.h"
#include "format/gflt_format.h"
#include "fs_util.h"
#include "read/event_source.h"
#include "sink/gflt_writer.h"

static uint32_t names[5];

static int setup(void **state)
{
    (void)state;
    static const char *const text[5] = {"", "void k<float>(int)", "step", "/lib/x.so", "λ\tname"};
    for (int i = 0; i < 5; i++)
        names[i] = gpufl__intern(text[i]);
    return 0;
}

static int to_memory(void *ctx, const void *data, size_t n, bool final)
{
    (void) final;
    return gpufl__bytebuf_append(ctx, data, n);
}

static const gpufl__session_meta meta_in = {.session_id = "app-20261121-000000-42-abcd",
                                            .app_name = "app",
                                            .host = "node7",
                                            .gpufl_version = "0.1.0",
                                            .pid = 42,
                                            .start_ns = 1000,
                                            .start_wall_ns = 1790000000000000000ull,
                                            .format_version = 1,
                                            .stop_detail = ""};

/* A file of n random events; the events are kept in *evs. */
static void write_file(gpufl__bytebuf *file, gfl_event **evs, size_t n, size_t chunk, int level,
                       const gpufl__session_meta *end)
{
    uint64_t rng = 77 + n;
    *evs = malloc((n ? n : 1) * sizeof **evs);
    assert_non_null(*evs);
    gpufl__gflt_writer w;
    gpufl__gflt_out out = {to_memory, file};
    assert_int_equal(gpufl__gflt_writer_open(&w, out, &gpufl__intern_lookup, &meta_in, chunk, level), 0);
    for (size_t i = 0; i < n; i++) {
        tu_random_event(&rng, (uint8_t)(1 + tu_rand(&rng) % (GFL_EV_TYPE_COUNT - 1)), 0.5, names, 5, &(*evs)[i]);
        assert_int_equal(gpufl__gflt_writer_add(&w, &(*evs)[i]), 0);
    }
    assert_int_equal(gpufl__gflt_writer_close(&w, end), 0);
}

/* Reads every event of data (as "mem.gflt"), checking them against expect. */
static long read_all(const void *data, size_t n, const gfl_event *expect, size_t nexpect, gpufl__event_source **keep,
                     char *err, size_t err_len)
{
    return tu_read_events(data, n, "mem.gflt", expect, nexpect, &gpufl__intern_lookup, keep, err, err_len);
}

static void test_roundtrip(void **state)
{
    (void)state;
    static const struct {
        size_t n, chunk;
        int level;
    } cases[] = {{0, 0, -1}, {1, 0, -1}, {500, 64, 0}, {5000, 0, 3}, {5000, 1000, 19}, {20000, 333, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gpufl__bytebuf file = {0};
        gfl_event *evs;
        gpufl__session_meta end = meta_in;
        end.ended = true;
        end.end_ns = 99999;
        end.end_wall_ns = end.start_wall_ns + 98999;
        end.lost[1] = 7;
        write_file(&file, &evs, cases[c].n, cases[c].chunk, cases[c].level, &end);
        gpufl__event_source *s;
        char err[1024];
        long n = read_all(file.p, file.len, evs, cases[c].n, &s, err, sizeof err);
        if (n < 0)
            fail_msg("case %zu: %s", c, err);
        assert_int_equal(n, cases[c].n);
        const gpufl__session_meta *m = &s->meta;
        assert_string_equal(m->session_id, meta_in.session_id);
        assert_string_equal(m->app_name, "app");
        assert_string_equal(m->host, "node7");
        assert_string_equal(m->gpufl_version, "0.1.0");
        assert_int_equal(m->pid, 42);
        assert_int_equal(m->start_ns, 1000);
        assert_true(m->start_wall_ns == meta_in.start_wall_ns);
        assert_int_equal(m->format_version, 1);
        assert_true(m->ended);
        assert_int_equal(m->end_ns, 99999);
        assert_int_equal(m->lost[1], 7);
        assert_int_equal(m->stop_reason, 0);
        assert_int_equal(s->format, GFL_SOURCE_GFLT);
        assert_int_equal(s->format_version, GFLT_VERSION);
        assert_int_equal(s->skipped_bytes, 0);
        assert_int_equal(s->skipped_records, 0);
        gpufl__source_close(s);
        free(evs);
        gpufl__bytebuf_free(&file);
    }
}

/* Chunk by chunk, as a reader that knows the format would walk it: the
 * header, chunks that tile the file, the trailer pointing at the index,
 * and the index listing every strings and events chunk. */
static void test_structure_and_index(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gfl_event *evs;
    gpufl__session_meta end = meta_in;
    end.ended = true;
    write_file(&file, &evs, 3000, 256, 0, &end); /* uncompressed: the test reads payloads */
    assert_memory_equal(file.p, GFLT_MAGIC, GFLT_MAGIC_LEN);
    assert_int_equal(gpufl__rd16(file.p + 8), GFLT_VERSION);
    uint64_t off = GFLT_FILE_HEADER_SIZE, index_at = 0;
    unsigned events_chunks = 0, strings_chunks = 0, last_type = 0, first_type = 0;
    uint64_t offsets[64];
    while (off < file.len) {
        gpufl__gflt_chunk_header h = {0};
        assert_true(file.len - off >= GFLT_CHUNK_HEADER_SIZE);
        assert_int_equal(gpufl__gflt_chunk_header_get(file.p + off, &h), 0);
        assert_int_equal(gpufl__crc32c(0, file.p + off + GFLT_CHUNK_HEADER_SIZE, h.stored_len), h.payload_crc);
        if (!first_type)
            first_type = h.type;
        if (h.type == GFLT_CHUNK_EVENTS || h.type == GFLT_CHUNK_STRINGS) {
            assert_true(events_chunks + strings_chunks < 64);
            offsets[events_chunks + strings_chunks] = off;
            events_chunks += h.type == GFLT_CHUNK_EVENTS;
            strings_chunks += h.type == GFLT_CHUNK_STRINGS;
        }
        if (h.type == GFLT_CHUNK_INDEX)
            index_at = off;
        last_type = h.type;
        off += GFLT_CHUNK_HEADER_SIZE + h.stored_len;
        if (h.type == GFLT_CHUNK_TRAILER)
            assert_int_equal(gpufl__rd64(file.p + off - GFLT_TRAILER_PAYLOAD), index_at);
    }
    assert_int_equal(off, file.len);
    assert_int_equal(first_type, GFLT_CHUNK_META);
    assert_int_equal(last_type, GFLT_CHUNK_TRAILER);
    assert_int_equal(events_chunks, (3000 + 255) / 256);
    assert_true(strings_chunks >= 1);
    /* the index: one entry per strings and events chunk, in file order */
    gpufl__gflt_chunk_header h = {0};
    assert_int_equal(gpufl__gflt_chunk_header_get(file.p + index_at, &h), 0);
    assert_int_equal(h.flags, 0);
    const uint8_t *p = file.p + index_at + GFLT_CHUNK_HEADER_SIZE, *e = p + h.stored_len;
    uint64_t count = 0, prev = 0, prev_min = 0, total = 0;
    assert_int_equal(gpufl__get_varint(&p, e, &count), 0);
    assert_int_equal(count, events_chunks + strings_chunks);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t type = 0, delta = 0, n = 0, zmin = 0, span = 0;
        assert_int_equal(gpufl__get_varint(&p, e, &type), 0);
        assert_int_equal(gpufl__get_varint(&p, e, &delta), 0);
        assert_int_equal(gpufl__get_varint(&p, e, &n), 0);
        assert_int_equal(gpufl__get_varint(&p, e, &zmin), 0);
        assert_int_equal(gpufl__get_varint(&p, e, &span), 0);
        assert_int_equal(prev + delta, offsets[i]);
        prev += delta;
        if (type == GFLT_CHUNK_EVENTS) {
            uint64_t min = prev_min + (uint64_t)gpufl__unzigzag(zmin);
            /* the chunk's events start at or after min and end by min + span */
            size_t first = (size_t)total;
            for (size_t k = first; k < first + n; k++) {
                assert_true(evs[k].h.ts >= min);
                assert_true(evs[k].h.ts <= min + span);
            }
            prev_min = min;
            total += n;
        }
    }
    assert_int_equal(total, 3000);
    free(evs);
    gpufl__bytebuf_free(&file);
}

/* A writer killed during its last chunk: every cut inside that chunk reads
 * the chunks before it and counts the rest as skipped. */
static void test_truncated_last_chunk(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gfl_event *evs;
    write_file(&file, &evs, 700, 200, -1, NULL); /* events, then index and trailer */
    /* find the last events chunk and what precedes it */
    uint64_t off = GFLT_FILE_HEADER_SIZE, last_events = 0, before = 0;
    size_t events_before = 0, events_so_far = 0;
    while (off < file.len) {
        gpufl__gflt_chunk_header h = {0};
        assert_int_equal(gpufl__gflt_chunk_header_get(file.p + off, &h), 0);
        if (h.type == GFLT_CHUNK_EVENTS) {
            last_events = off;
            events_before = events_so_far;
            events_so_far += 200;
        }
        off += GFLT_CHUNK_HEADER_SIZE + h.stored_len;
        if (h.type == GFLT_CHUNK_EVENTS)
            before = off;
    }
    assert_true(last_events > 0 && before > last_events);
    events_so_far = events_so_far > 700 ? 700 : events_so_far;
    char err[1024];
    for (uint64_t cut = last_events; cut < before; cut++) {
        gpufl__event_source *s;
        long n = read_all(file.p, cut, evs, 700, &s, err, sizeof err);
        if (n < 0)
            fail_msg("cut at %llu: %s", (unsigned long long)cut, err);
        assert_int_equal(n, events_before);
        assert_int_equal(s->skipped_bytes, cut - last_events);
        gpufl__source_close(s);
    }
    /* cut in the index or the trailer: every event, the rest skipped */
    for (uint64_t cut = before; cut <= file.len; cut++) {
        long n = read_all(file.p, cut, evs, 700, NULL, err, sizeof err);
        if (n != (long)events_so_far)
            fail_msg("cut at %llu of %zu: %ld events (%s)", (unsigned long long)cut, file.len, n, err);
    }
    long n;
    /* a file cut inside its header: nothing, and all of it skipped */
    for (size_t cut = 0; cut < GFLT_FILE_HEADER_SIZE; cut++) {
        gpufl__event_source *s;
        n = read_all(file.p, cut, NULL, 0, &s, err, sizeof err);
        assert_int_equal(n, 0);
        assert_int_equal(s->skipped_bytes, cut);
        gpufl__source_close(s);
    }
    free(evs);
    gpufl__bytebuf_free(&file);
}

/* One flipped bit anywhere: an error naming the file and an offset, or
 * (in bytes nothing checks: none, the reserved header bits) the same
 * events. Never different events without an error. */
static void test_flipped_bits(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gfl_event *evs;
    gpufl__session_meta end = meta_in;
    end.ended = true;
    write_file(&file, &evs, 400, 100, -1, &end);
    uint8_t *copy = malloc(file.len);
    assert_non_null(copy);
    char err[1024];
    unsigned errors = 0;
    for (size_t bit = 0; bit < file.len * 8; bit += 3) {
        memcpy(copy, file.p, file.len);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        err[0] = '\0';
        long n = read_all(copy, file.len, evs, 400, NULL, err, sizeof err);
        if (n >= 0) {
            assert_int_equal(n, 400);
            continue;
        }
        errors++;
        if (!strstr(err, "mem.gflt"))
            fail_msg("the error does not name the file: %s", err);
        if (bit / 8 >= GFLT_FILE_HEADER_SIZE && !strstr(err, "offset "))
            fail_msg("the error does not name an offset: %s", err);
    }
    assert_true(errors > file.len * 8 / 3 * 9 / 10);
    free(copy);
    free(evs);
    gpufl__bytebuf_free(&file);
}

/* Zeros after the last chunk (a file system extended the file before the
 * data reached it) are a torn tail; garbage that is not zero is damage. */
static void test_zero_tail(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gfl_event *evs;
    write_file(&file, &evs, 300, 100, -1, NULL);
    size_t len = file.len;
    static const uint8_t zeros[5000];
    assert_int_equal(gpufl__bytebuf_append(&file, zeros, sizeof zeros), 0);
    char err[1024];
    gpufl__event_source *s;
    long n = read_all(file.p, file.len, evs, 300, &s, err, sizeof err);
    assert_int_equal(n, 300);
    assert_int_equal(s->skipped_bytes, sizeof zeros);
    gpufl__source_close(s);
    file.p[len + 4000] = 1;
    n = read_all(file.p, file.len, evs, 300, NULL, err, sizeof err);
    assert_int_equal(n, GPUFL_ECORRUPT);
    assert_non_null(strstr(err, "offset"));
    free(evs);
    gpufl__bytebuf_free(&file);
}

/* A chunk type a newer writer added is skipped and counted; a newer file
 * version is refused; so is a file that is not .gflt at all. */
static void test_foreign_files(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gfl_event *evs;
    write_file(&file, &evs, 50, 0, -1, NULL);
    uint8_t chunk[GFLT_CHUNK_HEADER_SIZE + 3] = {0};
    memcpy(chunk + GFLT_CHUNK_HEADER_SIZE, "new", 3);
    gpufl__gflt_chunk_header h = {99, 0, 3, 3, gpufl__crc32c(0, "new", 3)};
    gpufl__gflt_chunk_header_put(chunk, &h);
    assert_int_equal(gpufl__bytebuf_append(&file, chunk, sizeof chunk), 0);
    char err[1024];
    gpufl__event_source *s;
    assert_int_equal(read_all(file.p, file.len, evs, 50, &s, err, sizeof err), 50);
    assert_int_equal(s->skipped_chunks, 1);
    gpufl__source_close(s);
    /* unknown flag bits in a known chunk: damage (it could not be read right) */
    h.type = GFLT_CHUNK_STOP;
    h.flags = 0x80;
    gpufl__gflt_chunk_header_put(file.p + file.len - sizeof chunk, &h);
    assert_int_equal(read_all(file.p, file.len, evs, 50, NULL, err, sizeof err), GPUFL_ECORRUPT);
    /* version 2 */
    gpufl__le16(file.p + 8, GFLT_VERSION + 1);
    gpufl__le32(file.p + 12, gpufl__crc32c(0, file.p, 12));
    assert_int_equal(read_all(file.p, file.len, evs, 50, NULL, err, sizeof err), GPUFL_EUNSUPPORTED);
    assert_non_null(strstr(err, "version 2"));
    /* not .gflt: an NDJSON reader gets it and says which line is wrong */
    static const char text[] = "hello\n";
    assert_true(read_all(text, sizeof text - 1, NULL, 0, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, ":1:"));
    free(evs);
    gpufl__bytebuf_free(&file);
}

/* A stop chunk (writing stopped early) comes back as the session's stop. */
static void test_stop(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gpufl__gflt_writer w;
    gpufl__gflt_out out = {to_memory, &file};
    assert_int_equal(gpufl__gflt_writer_open(&w, out, &gpufl__intern_lookup, &meta_in, 10, -1), 0);
    uint64_t rng = 3;
    gfl_event ev[25];
    for (int i = 0; i < 25; i++) {
        tu_random_event(&rng, GFL_EV_SCOPE_BEGIN, 0.5, names, 5, &ev[i]);
        assert_int_equal(gpufl__gflt_writer_add(&w, &ev[i]), 0);
    }
    /* 20 written in two chunks, 5 buffered: lost with the stop */
    gpufl__gflt_writer_stop(&w, 1, 5555, "session_max_bytes (1048576) reached");
    assert_int_equal(gpufl__gflt_writer_add(&w, &ev[0]), GPUFL_EIO);
    assert_int_equal(w.lost[GFL_CHANNEL_SCOPE], 6);
    gpufl__session_meta end = meta_in;
    end.ended = true;
    memcpy(end.lost, w.lost, sizeof end.lost);
    assert_int_equal(gpufl__gflt_writer_close(&w, &end), GPUFL_EIO);
    char err[1024];
    gpufl__event_source *s;
    assert_int_equal(read_all(file.p, file.len, ev, 25, &s, err, sizeof err), 20);
    assert_int_equal(s->meta.stop_reason, 1);
    assert_int_equal(s->meta.stopped_at_ns, 5555);
    assert_string_equal(s->meta.stop_detail, "session_max_bytes (1048576) reached");
    assert_true(s->meta.ended);
    assert_int_equal(s->meta.lost[GFL_CHANNEL_SCOPE], 6);
    gpufl__source_close(s);
    gpufl__bytebuf_free(&file);
}

/* A big file on disk goes through the read-ahead thread: the same events,
 * and a damaged chunk deep inside still stops it with the right offset. */
static void test_big_file_read_ahead(void **state)
{
    (void)state;
    gpufl__bytebuf file = {0};
    gfl_event *evs;
    gpufl__session_meta end = meta_in;
    end.ended = true;
    write_file(&file, &evs, 150000, 4096, 0, &end); /* uncompressed */
    assert_true(file.len > (4u << 20));             /* gflt_chunks.c reads ahead from 4 MiB on */
    char *dir = tu_mkdtemp("gflt-big");
    char path[4200];
    snprintf(path, sizeof path, "%s/big.gflt", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(file.p, 1, file.len, f), file.len);
    assert_int_equal(fclose(f), 0);
    char err[1024];
    gpufl__event_source *s;
    assert_int_equal(gpufl__source_open(path, &s, err, sizeof err), 0);
    const gfl_event *ev;
    size_t n = 0;
    int rc;
    while ((rc = gpufl__source_next(s, &ev)) == 1) {
        const char *diff = tu_event_diff(&evs[n], &gpufl__intern_lookup, ev, &s->strings);
        if (diff)
            fail_msg("event %zu: %s", n, diff);
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 150000);
    assert_true(s->meta.ended);
    gpufl__source_close(s);
    /* a flipped byte in the middle of the file */
    size_t at = file.len / 2;
    file.p[at] ^= 0x10;
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(file.p, 1, file.len, f), file.len);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(gpufl__source_open(path, &s, err, sizeof err), 0);
    n = 0;
    while ((rc = gpufl__source_next(s, &ev)) == 1)
        n++;
    assert_int_equal(rc, GPUFL_ECORRUPT);
    assert_non_null(strstr(s->err, path));
    assert_non_null(strstr(s->err, "offset"));
    assert_true(n > 0 && n < 150000);
    /* the error stays */
    assert_int_equal(gpufl__source_next(s, &ev), GPUFL_ECORRUPT);
    gpufl__source_close(s);
    /* and stopping early (closing before the end) leaves nothing behind */
    assert_int_equal(gpufl__source_open(path, &s, err, sizeof err), 0);
    assert_int_equal(gpufl__source_next(s, &ev), 1);
    gpufl__source_close(s);
    tu_rm_rf(dir);
    free(dir);
    free(evs);
    gpufl__bytebuf_free(&file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_structure_and_index),
        cmocka_unit_test(test_truncated_last_chunk),
        cmocka_unit_test(test_flipped_bits),
        cmocka_unit_test(test_zero_tail),
        cmocka_unit_test(test_foreign_files),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_big_file_read_ahead),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
