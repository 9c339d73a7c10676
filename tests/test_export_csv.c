/*
 * The CSV export (src/present/export/export_csv.c): one RFC 4180 file per table.
 *
 * Why: CSV is what people load into pandas and spreadsheets, and a name
 * with a comma or a quote that is not quoted shifts every later column.
 * The files are read back with a strict RFC 4180 reader (CRLF records,
 * quoted fields with doubled quotes) and checked against the fixture
 * (export_fixture.h) field by field: names with commas, quotes, a newline
 * and a control character come back as recorded; unknown values are empty
 * (an unended scope's end, a launch's call when none is known, a sample
 * field the sample lacks); every row has the header's number of fields.
 * Then the real sample session: one row per kernel, with the trace's start
 * and end, in the trace's order. Also: a directory that cannot be made
 * fails with its name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_fixture.h"
#include "flight_fixture.h"
#include "gpufl/trace.h"
#include "present/export/export.h"
#include "session_file.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "export-csv")

/* ---- a strict RFC 4180 reader ---------------------------------------------- */

typedef struct csv_file {
    char ***rows; /* rows[0] is the header */
    size_t *nfields;
    size_t nrows;
    char *data;
} csv_file;

static void push_field(char ***fields, size_t *n, size_t *cap, char *start)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *fields = realloc(*fields, *cap * sizeof **fields);
        assert_non_null(*fields);
    }
    (*fields)[(*n)++] = start;
}

/* Reads path; fails the test on anything RFC 4180 does not allow (a bare
 * LF or CR outside quotes, a quote inside an unquoted field, text after a
 * closing quote, a last record without its CRLF). */
static void csv_read(const char *path, csv_file *f)
{
    memset(f, 0, sizeof *f);
    size_t len;
    f->data = tu_read_file(path, &len);
    if (!f->data)
        fail_msg("cannot read %s", path);
    size_t rows_cap = 0;
    char *p = f->data, *end = f->data + len;
    while (p < end) {
        char **fields = NULL;
        size_t n = 0, cap = 0;
        for (;;) {
            char *out = p, *start = p;
            if (*p == '"') {
                p++;
                for (;;) {
                    if (p >= end)
                        fail_msg("%s: a quoted field never closes", path);
                    if (*p == '"' && p + 1 < end && p[1] == '"') {
                        *out++ = '"';
                        p += 2;
                    } else if (*p == '"') {
                        p++;
                        break;
                    } else {
                        *out++ = *p++;
                    }
                }
            } else {
                while (p < end && *p != ',' && *p != '\r' && *p != '\n') {
                    if (*p == '"')
                        fail_msg("%s: a quote in an unquoted field", path);
                    out++, p++;
                }
            }
            char sepc = p < end ? *p : '\0';
            *out = '\0';
            push_field(&fields, &n, &cap, start);
            if (sepc == ',') {
                p++;
                continue;
            }
            if (sepc == '\r' && p + 1 < end && p[1] == '\n') {
                p += 2;
                break;
            }
            fail_msg("%s: record %zu does not end in CRLF", path, f->nrows + 1);
        }
        if (f->nrows == rows_cap) {
            rows_cap = rows_cap ? rows_cap * 2 : 64;
            f->rows = realloc(f->rows, rows_cap * sizeof *f->rows);
            f->nfields = realloc(f->nfields, rows_cap * sizeof *f->nfields);
            assert_true(f->rows && f->nfields);
        }
        f->rows[f->nrows] = fields;
        f->nfields[f->nrows++] = n;
    }
    assert_true(f->nrows >= 1);
    for (size_t r = 1; r < f->nrows; r++)
        if (f->nfields[r] != f->nfields[0])
            fail_msg("%s: row %zu has %zu fields, the header %zu", path, r, f->nfields[r], f->nfields[0]);
}

static void csv_free(csv_file *f)
{
    for (size_t r = 0; r < f->nrows; r++)
        free(f->rows[r]);
    free(f->rows);
    free(f->nfields);
    free(f->data);
}

/* Field `col` (by header name) of data row r (from 0). */
static const char *field(const csv_file *f, size_t r, const char *col)
{
    for (size_t c = 0; c < f->nfields[0]; c++)
        if (!strcmp(f->rows[0][c], col)) {
            assert_true(r + 1 < f->nrows);
            return f->rows[r + 1][c];
        }
    fail_msg("no column %s", col);
    return NULL;
}

static unsigned long long num(const csv_file *f, size_t r, const char *col)
{
    const char *s = field(f, r, col);
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (!*s || *e)
        fail_msg("column %s row %zu: '%s' is not a number", col, r, s);
    return v;
}

static void load(const char *dir, const char *name, csv_file *f)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    csv_read(path, f);
}

static void test_fixture(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/out/csv", work); /* made, parents too */
    gpufl__export_result r;
    tu_export_session(session, gpufl__export_csv, dir, &r);
    assert_int_equal(r.files, 11);
    /* 3 kernels, 1 copy, 1 memset, 1 sync, 2 allocations, 4 scopes, 3 NVTX, 3 + 2 samples */
    assert_int_equal(r.rows, 3 + 1 + 1 + 1 + 2 + 4 + 3 + 3 + 2);

    csv_file k;
    load(dir, "kernels.csv", &k);
    assert_int_equal(k.nrows - 1, FIX_KERNELS);
    assert_string_equal(k.rows[0][0], "start_ns");
    assert_string_equal(field(&k, 0, "name"), "gemm<float, 128>"); /* quoted: it has a comma */
    assert_int_equal(num(&k, 0, "start_ns"), FIX_US(250));
    assert_int_equal(num(&k, 0, "end_ns"), FIX_US(350));
    assert_int_equal(num(&k, 0, "duration_ns"), 100000);
    assert_int_equal(num(&k, 0, "grid_x"), 132);
    assert_int_equal(num(&k, 0, "block_x"), 256);
    assert_int_equal(num(&k, 0, "registers"), 64);
    assert_int_equal(num(&k, 0, "stream"), 7);
    assert_int_equal(num(&k, 0, "correlation"), 11);
    assert_int_equal(num(&k, 0, "tid"), 101);
    assert_int_equal(num(&k, 0, "api_start_ns"), FIX_US(210));
    assert_int_equal(num(&k, 0, "api_end_ns"), FIX_US(215));
    assert_string_equal(field(&k, 0, "occupancy"), "0.5000");
    assert_string_equal(field(&k, 0, "occupancy_limiter"), "registers");
    assert_string_equal(field(&k, 0, "stack_id"), "");
    assert_string_equal(field(&k, 1, "name"), "relu");
    assert_string_equal(field(&k, 2, "name"), "softmax");
    csv_free(&k);

    csv_file c;
    load(dir, "copies.csv", &c);
    assert_int_equal(c.nrows - 1, 1);
    assert_string_equal(field(&c, 0, "kind"), "HtoD");
    assert_string_equal(field(&c, 0, "src_kind"), "pinned");
    assert_int_equal(num(&c, 0, "bytes"), 4096);
    assert_string_equal(field(&c, 0, "dst_device"), "");
    csv_free(&c);

    csv_file m;
    load(dir, "memsets.csv", &m);
    assert_int_equal(num(&m, 0, "bytes"), 512);
    assert_string_equal(field(&m, 0, "tid"), ""); /* no launching call known */
    assert_string_equal(field(&m, 0, "api_start_ns"), "");
    csv_free(&m);

    csv_file y;
    load(dir, "syncs.csv", &y);
    assert_string_equal(field(&y, 0, "kind"), "stream");
    assert_int_equal(num(&y, 0, "duration_ns"), 30000);
    csv_free(&y);

    csv_file a;
    load(dir, "memory.csv", &a);
    assert_int_equal(a.nrows - 1, 2);
    assert_string_equal(field(&a, 0, "op"), "alloc");
    assert_string_equal(field(&a, 1, "op"), "free");
    assert_string_equal(field(&a, 0, "address"), "0x7f0000000000");
    assert_int_equal(num(&a, 0, "bytes"), 1048576);
    assert_int_equal(num(&a, 0, "failed"), 0);
    csv_free(&a);

    csv_file e; /* a table the session does not have: its header alone */
    load(dir, "triggers.csv", &e);
    assert_int_equal(e.nrows, 1);
    assert_string_equal(e.rows[0][0], "ts_ns");
    csv_free(&e);

    csv_file s;
    load(dir, "scopes.csv", &s);
    assert_int_equal(s.nrows - 1, 4);
    int seen = 0;
    for (size_t i = 0; i + 1 < s.nrows; i++) {
        const char *name = field(&s, i, "name");
        if (!strcmp(name, "forward, \"fwd\"\n")) {
            assert_int_equal(num(&s, i, "parent"), 1);
            assert_int_equal(num(&s, i, "depth"), 1);
            seen |= 1;
        } else if (!strcmp(name, "loader\001")) {
            assert_int_equal(num(&s, i, "tid"), 202);
            seen |= 2;
        } else if (!strcmp(name, "open")) {
            /* never ended: to the session's last recorded time, its end */
            assert_int_equal(num(&s, i, "end_ns"), FIX_US(2000));
            assert_int_equal(num(&s, i, "duration_ns"), FIX_US(2000) - FIX_US(950));
            assert_int_equal(num(&s, i, "unended"), 1);
            seen |= 4;
        } else {
            assert_int_equal(num(&s, i, "unended"), 0);
        }
    }
    assert_int_equal(seen, 7);
    csv_free(&s);

    csv_file n;
    load(dir, "nvtx.csv", &n);
    assert_int_equal(n.nrows - 1, 3);
    assert_string_equal(field(&n, 0, "name"), "attention op");
    assert_string_equal(field(&n, 1, "domain"), "io");
    assert_string_equal(field(&n, 2, "name"), "checkpoint");
    assert_int_equal(num(&n, 2, "mark"), 1);
    csv_free(&n);

    csv_file d;
    load(dir, "device_samples.csv", &d);
    assert_int_equal(d.nrows - 1, 3);
    assert_string_equal(field(&d, 1, "power_w"), "101.500");
    assert_int_equal(num(&d, 2, "gpu_util_pct"), 90);
    assert_int_equal(num(&d, 0, "temp_c"), 40);
    assert_string_equal(field(&d, 0, "mem_temp_c"), ""); /* never sampled */
    assert_string_equal(field(&d, 0, "fan_pct"), "");
    csv_free(&d);

    csv_file h;
    load(dir, "host_samples.csv", &h);
    assert_int_equal(h.nrows - 1, 2);
    assert_string_equal(field(&h, 0, "process_cpu_pct"), "95.25");
    assert_int_equal(num(&h, 1, "process_rss_bytes"), 2100000000);
    csv_free(&h);
    free(session);
}

/* The real session: one row per kernel, in the trace's order. */
static void test_train_sample(void **state)
{
    (void)state;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/train", work);
    gpufl__export_result r;
    tu_export_session(TU_TRAIN_SAMPLE, gpufl__export_csv, dir, &r);
    gpufl_trace *t = tu_trace_open(TU_TRAIN_SAMPLE);
    const gpufl_trace_kernels *kt = gpufl_trace_get_kernels(t);
    csv_file k;
    load(dir, "kernels.csv", &k);
    assert_int_equal(k.nrows - 1, kt->n);
    assert_true(kt->n > 1000);
    for (size_t i = 0; i < kt->n; i++) {
        assert_int_equal(num(&k, i, "start_ns"), kt->start_ns[i]);
        assert_int_equal(num(&k, i, "end_ns"), gpufl_trace_kernel_end(kt, i));
        assert_int_equal(num(&k, i, "correlation"), kt->correlation[i]);
        assert_true(*field(&k, i, "name"));
    }
    csv_free(&k);
    csv_file d;
    load(dir, "device_samples.csv", &d);
    assert_int_equal(d.nrows - 1, gpufl_trace_get_device_samples(t)->n);
    csv_free(&d);
    gpufl_trace_close(t);
}

/* The flight recorder's tables, and the failed allocation marked in
 * memory.csv, with the times every other output gives. */
static void test_flight(void **state)
{
    (void)state;
    char path[4096], dir[4200];
    ff_write(work, "flight", path);
    snprintf(dir, sizeof dir, "%s/flight-csv", work);
    gpufl__export_result r;
    tu_export_session(path, gpufl__export_csv, dir, &r);
    csv_file m;
    load(dir, "memory.csv", &m);
    assert_int_equal(m.nrows - 1, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(num(&m, i, "failed"), num(&m, i, "ts_ns") == 6000000);
    csv_free(&m);
    csv_file g;
    load(dir, "triggers.csv", &g);
    assert_int_equal(g.nrows - 1, 2);
    assert_int_equal(num(&g, 0, "ts_ns"), 6000000);
    assert_string_equal(field(&g, 0, "kind"), "oom");
    assert_string_equal(field(&g, 0, "outcome"), "dumped");
    assert_string_equal(field(&g, 0, "dump"), "dump-0001");
    assert_int_equal(num(&g, 0, "tid"), 7);
    assert_string_equal(field(&g, 1, "outcome"), "storm");
    assert_string_equal(field(&g, 1, "tid"), "");
    assert_string_equal(field(&g, 1, "dump"), "");
    csv_free(&g);
    csv_file w;
    load(dir, "trace_windows.csv", &w);
    assert_int_equal(w.nrows - 1, 2);
    assert_int_equal(num(&w, 0, "begin_ns"), 2000000);
    assert_int_equal(num(&w, 0, "end_ns"), 4000000);
    assert_string_equal(field(&w, 0, "reason"), "steps");
    assert_string_equal(field(&w, 0, "detail"), "steps 100-101 of `step`");
    assert_int_equal(num(&w, 0, "unended"), 0);
    assert_int_equal(num(&w, 1, "index"), 2);
    assert_int_equal(num(&w, 1, "end_ns"), 11000000);
    assert_int_equal(num(&w, 1, "duration_ns"), 4000000);
    assert_int_equal(num(&w, 1, "unended"), 1);
    csv_free(&w);
}

static void test_bad_directory(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    char file[4200], dir[4300];
    snprintf(file, sizeof file, "%s/a-file", work);
    tu_write_file(file, "x");
    snprintf(dir, sizeof dir, "%s/csv", file);
    gpufl_trace *t = tu_trace_open(session);
    char err[1024];
    gpufl__export_result r;
    assert_int_equal(gpufl__export_csv(t, dir, &r, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, dir));
    gpufl_trace_close(t);
    free(session);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_train_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_directory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
