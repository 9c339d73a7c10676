/*
 * The CPU stack table read back from a session (src/read/stack_table.c),
 * and what `gpufl stacks` and `gpufl report` show of it.
 *
 * Why: a session records its stacks as `stack` events in whichever format
 * it was written (NDJSON logs or a .gflt trace), and users open either; the
 * table must be the same from both. Checked on a hand-made session written
 * both ways and opened as a directory, a session.json, one device.log, a
 * .gflt file and a directory holding only trace.gflt: pieces joined out of
 * order, a missing piece marked, a JIT frame without module, truncation,
 * uses counted from kernels, copies, syncs, allocations and graph launches,
 * uses of a stack never defined counted apart. A .gflt cut at every length
 * loads what it holds (a killed writer); a torn NDJSON line is skipped;
 * damage and impossible pieces are errors naming the file. Frames are
 * named from this machine's files only for a session recorded here (its
 * session.json's machine id). And on the bundled real session (recorded as
 * trace.gflt on an H200, without a machine id) the CLI lists its stacks as
 * module+offset, never named from this machine's libc, and the report
 * shows frames under the hotspots.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/intern.h"
#include "core/machine_id.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "read/stack_table.h"
#include "read/symbolize.h"
#include "session_file.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(dir, "stack-table")

#define SAMPLE_DIR GFL_SOURCE_DIR "/samples/train_sample"
#define LIB_A "/opt/app/lib/liba.so"
#define LIB_B "/usr/lib/libcudart.so.12"
#define TORCH_CPU "/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so" /* in the sample */

static gpufl__session_meta session(void)
{
    return (gpufl__session_meta){.session_id = "stacks-20261121-101010-4242-beef",
                                 .app_name = "stacks",
                                 .host = "node3",
                                 .gpufl_version = "0.1.0",
                                 .pid = 4242,
                                 .start_ns = 1000000,
                                 .start_wall_ns = 1790000000000000000ull,
                                 .format_version = 1,
                                 .ended = true,
                                 .end_ns = 9000000,
                                 .end_wall_ns = 1790000000008000000ull,
                                 .stop_detail = ""};
}

static gfl_event ev_of(uint8_t type, uint64_t ts)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = type;
    ev.h.ts = ts;
    ev.h.tid = 7;
    return ev;
}

/* One piece of stack id: frames first..first+count of total, frame i at
 * offset 0x1000 * id + i in module (NULL: JIT code). */
static gfl_event piece(uint64_t ts, uint32_t id, uint16_t first, uint16_t count, uint16_t total, const char *module,
                       bool truncated)
{
    gfl_event ev = ev_of(GFL_EV_STACK, ts);
    ev.u.stack =
        (gfl_stack_payload){.id = id, .first = first, .total = total, .count = (uint8_t)count, .truncated = truncated};
    for (uint16_t i = 0; i < count; i++)
        ev.u.stack.frames[i] = (gfl_stack_frame){module ? gpufl__intern(module) : 0, 0x1000u * id + first + i};
    return ev;
}

static gfl_event kernel(uint64_t ts, uint32_t stack)
{
    gfl_event ev = ev_of(GFL_EV_KERNEL, ts);
    ev.u.kernel = (gfl_kernel_payload){.end_ts = ts + 500,
                                       .name = gpufl__intern("gemm"),
                                       .context = 1,
                                       .stream = 7,
                                       .correlation = (uint32_t)ts,
                                       .grid = {1, 1, 1},
                                       .block = {32, 1, 1},
                                       .stack_id = stack};
    return ev;
}

/* The session: stack 1 (3 frames, one piece, its last frame JIT code),
 * stack 2 (20 frames in two pieces, the second written first, truncated),
 * stack 4 (15 frames, only its second piece: 12 missing), and stack 3
 * referred to but never defined. Uses: 1 four times, 2 three, 3 once. */
static size_t stack_session(gfl_event *evs)
{
    size_t n = 0;
    evs[n++] = piece(2000000, 1, 0, 2, 3, LIB_A, false);
    evs[n - 1].u.stack.count = 3;
    evs[n - 1].u.stack.frames[2] = (gfl_stack_frame){0, 0x7f3a1c20};
    evs[n++] = kernel(2000100, 1);
    evs[n++] = kernel(2000200, 1);
    evs[n++] = piece(2000300, 2, 12, 8, 20, LIB_B, true);
    evs[n++] = piece(2000301, 2, 0, 12, 20, LIB_A, true);
    evs[n++] = kernel(2000400, 2);
    gfl_event ev = ev_of(GFL_EV_MEMCPY, 2000500);
    ev.u.memcpy = (gfl_memcpy_payload){.end_ts = 2000600,
                                       .bytes = 4096,
                                       .context = 1,
                                       .stream = 7,
                                       .correlation = 9,
                                       .stack_id = 2,
                                       .copy_kind = GFL_COPY_HTOD};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_SYNC, 2000700);
    ev.u.sync = (gfl_sync_payload){
        .end_ts = 2000800, .context = 1, .stream = 7, .correlation = 10, .stack_id = 1, .sync_kind = GFL_SYNC_STREAM};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_MEM_ALLOC, 2000900);
    ev.u.mem = (gfl_mem_payload){.address = 0x7f0000000000ull,
                                 .bytes = 1 << 20,
                                 .context = 1,
                                 .correlation = 11,
                                 .stack_id = 2,
                                 .mem_kind = GFL_MEM_DEVICE};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_GRAPH_LAUNCH, 2001000);
    ev.u.graph = (gfl_graph_launch_payload){.end_ts = 2001100, .correlation = 12, .stack_id = 1};
    evs[n++] = ev;
    evs[n++] = kernel(2001200, 3);
    evs[n++] = kernel(2001300, 0);
    evs[n++] = piece(2001400, 4, 12, 3, 15, LIB_B, false);
    return n;
}

/* Writes the session as <dir>/s.gflt, the NDJSON directory <dir>/s and
 * <dir>/only/trace.gflt. */
static void write_session(char *gflt, char *ndjson, char *only)
{
    gfl_event evs[32];
    size_t n = stack_session(evs);
    gpufl__session_meta m = session();
    sprintf(gflt, "%s/s.gflt", dir);
    sprintf(ndjson, "%s/s", dir);
    tu_write_gflt_and_ndjson(gflt, ndjson, evs, n, &m, 4, 1);
    sprintf(only, "%s/only", dir);
    assert_int_equal(mkdir(only, 0755), 0);
    size_t len;
    char *bytes = tu_read_file(gflt, &len);
    assert_non_null(bytes);
    char path[4200];
    snprintf(path, sizeof path, "%s/trace.gflt", only);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(bytes);
}

static void load(const char *path, gpufl__stack_table *t)
{
    char err[1024] = "";
    int rc = gpufl__stack_table_load(path, t, err, sizeof err);
    if (rc != 0)
        fail_msg("%s: %s", path, err);
}

/* What stack_session() recorded, field by field. */
static void check_table(const gpufl__stack_table *t)
{
    assert_int_equal(t->n, 3);
    assert_int_equal(t->unknown_uses, 1);
    assert_int_equal(t->nmodules, 2);

    const gpufl__stack_rec *s = gpufl__stack_table_find(t, 1);
    assert_non_null(s);
    assert_int_equal(s->total, 3);
    assert_int_equal(s->missing, 0);
    assert_false(s->truncated);
    assert_int_equal(s->uses, 4);
    assert_string_equal(s->frames[0].module, LIB_A);
    assert_int_equal(s->frames[1].offset, 0x1001);
    assert_null(s->frames[2].module);
    assert_int_equal(s->frames[2].offset, 0x7f3a1c20);

    s = gpufl__stack_table_find(t, 2);
    assert_non_null(s);
    assert_int_equal(s->total, 20);
    assert_int_equal(s->missing, 0);
    assert_true(s->truncated);
    assert_int_equal(s->uses, 3);
    for (uint32_t i = 0; i < 20; i++) {
        assert_true(s->frames[i].present);
        assert_string_equal(s->frames[i].module, i < 12 ? LIB_A : LIB_B);
        assert_int_equal(s->frames[i].offset, 0x2000 + i);
    }

    assert_null(gpufl__stack_table_find(t, 3));
    s = gpufl__stack_table_find(t, 4);
    assert_non_null(s);
    assert_int_equal(s->total, 15);
    assert_int_equal(s->missing, 12);
    assert_int_equal(s->uses, 0);
    for (uint32_t i = 0; i < 15; i++)
        assert_int_equal(s->frames[i].present, i >= 12);
    assert_int_equal(s->frames[14].offset, 0x4000 + 14);
}

/* a and b hold the same stacks, frame for frame. */
static void assert_same_table(const gpufl__stack_table *a, const gpufl__stack_table *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->unknown_uses, b->unknown_uses);
    assert_int_equal(a->nmodules, b->nmodules);
    for (size_t i = 0; i < a->n; i++) {
        const gpufl__stack_rec *x = &a->stacks[i], *y = &b->stacks[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->total, y->total);
        assert_int_equal(x->missing, y->missing);
        assert_int_equal(x->truncated, y->truncated);
        assert_int_equal(x->uses, y->uses);
        for (uint32_t f = 0; f < x->total; f++) {
            assert_int_equal(x->frames[f].present, y->frames[f].present);
            assert_int_equal(x->frames[f].offset, y->frames[f].offset);
            assert_int_equal(x->frames[f].module == NULL, y->frames[f].module == NULL);
            if (x->frames[f].module)
                assert_string_equal(x->frames[f].module, y->frames[f].module);
        }
    }
}

static void test_formats_agree(void **state)
{
    (void)state;
    char gflt[4200], ndjson[4200], only[4200], path[4300];
    write_session(gflt, ndjson, only);
    gpufl__stack_table from_ndjson, t;
    load(ndjson, &from_ndjson);
    check_table(&from_ndjson);

    load(gflt, &t);
    check_table(&t);
    assert_same_table(&from_ndjson, &t);
    gpufl__stack_table_free(&t);

    load(only, &t);
    assert_same_table(&from_ndjson, &t);
    gpufl__stack_table_free(&t);

    snprintf(path, sizeof path, "%s/session.json", ndjson); /* the recorder writes one; the export does not */
    tu_write_file(path, "{\"format\": \"gpufl-session\", \"format_version\": 1}\n");
    load(path, &t);
    assert_same_table(&from_ndjson, &t);
    gpufl__stack_table_free(&t);

    snprintf(path, sizeof path, "%s/device.log", ndjson);
    load(path, &t);
    assert_same_table(&from_ndjson, &t);
    gpufl__stack_table_free(&t);
    gpufl__stack_table_free(&from_ndjson);

#ifdef GFL_CLI
    /* the CLI prints the same from both */
    char *out_ndjson, *out_gflt, *err;
    const char *raw_ndjson[] = {ndjson, "--raw", NULL}, *raw_gflt[] = {gflt, "--raw", NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "stacks", raw_ndjson, &out_ndjson, &err), 0);
    free(err);
    assert_int_equal(tu_run_subcommand(GFL_CLI, "stacks", raw_gflt, &out_gflt, &err), 0);
    free(err);
    assert_string_equal(out_ndjson, out_gflt);
    assert_non_null(strstr(out_gflt, "stack 2: 20 frames (truncated: the stack was deeper), 3 uses\n"));
    assert_non_null(strstr(out_gflt, "  #12 " LIB_B "+0x200c\n"));
    assert_non_null(strstr(out_gflt, "  #2  ?+0x7f3a1c20\n"));
    assert_non_null(strstr(out_gflt, "  #0  (not recorded: a piece of the definition is missing)\n"));
    assert_non_null(strstr(out_gflt, "1 event refer to stacks whose definition was not recorded"));
    free(out_ndjson);
    free(out_gflt);
#endif
}

/* A writer killed mid-file: every cut of the .gflt loads, and holds no
 * more than the whole file, piece for piece. */
static void test_truncated_gflt(void **state)
{
    (void)state;
    char gflt[4200], ndjson[4200], only[4200], cut[4300];
    write_session(gflt, ndjson, only);
    size_t len;
    char *bytes = tu_read_file(gflt, &len);
    assert_non_null(bytes);
    gpufl__stack_table whole;
    load(gflt, &whole);
    snprintf(cut, sizeof cut, "%s/cut.gflt", dir);
    size_t prev_present = 0, some = 0;
    for (size_t n = 0; n <= len; n++) {
        FILE *f = fopen(cut, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
        gpufl__stack_table t;
        char err[1024] = "";
        int rc = gpufl__stack_table_load(cut, &t, err, sizeof err);
        if (rc != 0)
            fail_msg("cut at %zu of %zu: %s", n, len, err);
        size_t present = 0;
        for (size_t i = 0; i < t.n; i++) {
            const gpufl__stack_rec *s = &t.stacks[i], *w = gpufl__stack_table_find(&whole, s->id);
            assert_non_null(w);
            assert_int_equal(s->total, w->total);
            assert_true(s->uses <= w->uses);
            for (uint32_t f = 0; f < s->total; f++) {
                if (!s->frames[f].present)
                    continue;
                present++;
                assert_int_equal(s->frames[f].offset, w->frames[f].offset);
            }
        }
        assert_true(present >= prev_present); /* a longer file never loses a frame */
        prev_present = present;
        some += t.n > 0 && n < len;
        gpufl__stack_table_free(&t);
    }
    assert_true(some > 0); /* cuts inside the file found stacks of its first chunks */
    gpufl__stack_table_free(&whole);
    free(bytes);
}

/* A torn last NDJSON line is skipped too. */
static void test_torn_ndjson(void **state)
{
    (void)state;
    char gflt[4200], ndjson[4200], only[4200], log[4300];
    write_session(gflt, ndjson, only);
    snprintf(log, sizeof log, "%s/device.log", ndjson);
    FILE *f = fopen(log, "a");
    assert_non_null(f);
    fputs("{\"type\":\"stack\",\"ts_ns\":2001500,\"id\":9,\"first\":0,\"total\":3,\"frames\":[[\"/x", f);
    assert_int_equal(fclose(f), 0);
    gpufl__stack_table t;
    load(ndjson, &t);
    check_table(&t);
    gpufl__stack_table_free(&t);
}

static void expect_error(const char *path, const char *must_say)
{
    gpufl__stack_table t;
    char err[1024] = "";
    assert_int_equal(gpufl__stack_table_load(path, &t, err, sizeof err), GPUFL_ECORRUPT);
    if (!strstr(err, must_say))
        fail_msg("the message \"%s\" does not say \"%s\"", err, must_say);
    assert_int_equal(t.n, 0);
    assert_null(t.stacks);
}

static void test_damage_is_an_error(void **state)
{
    (void)state;
    char gflt[4200], ndjson[4200], only[4200], log[4300];
    write_session(gflt, ndjson, only);

    /* a damaged byte inside the first chunk: the file and the offset */
    size_t len;
    char *bytes = tu_read_file(gflt, &len);
    assert_non_null(bytes);
    bytes[40] ^= 0x5a;
    FILE *f = fopen(gflt, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(bytes);
    expect_error(gflt, "s.gflt: damaged chunk at offset ");

    /* a line that is not JSON in the middle of device.log: file and line */
    snprintf(log, sizeof log, "%s/device.log", ndjson);
    char *text = tu_read_file(log, NULL);
    assert_non_null(text);
    char *second = strchr(text, '\n');
    assert_non_null(second);
    second[1] = '#';
    tu_write_file(log, text);
    free(text);
    expect_error(ndjson, "device.log:2: ");

    /* a piece whose frames run past its stack's frame count */
    gfl_event evs[2] = {piece(2000000, 9, 10, 4, 12, LIB_A, false), kernel(2000100, 9)};
    gpufl__session_meta m = session();
    char bad[4200], bad_dir[4200];
    sprintf(bad, "%s/bad.gflt", dir);
    sprintf(bad_dir, "%s/bad", dir);
    tu_write_gflt_and_ndjson(bad, bad_dir, evs, 2, &m, 4, 1);
    expect_error(bad, "bad.gflt: event 1: stack 9 has frames past its frame count");

    /* two pieces that disagree on the frame count */
    evs[0] = piece(2000000, 9, 0, 4, 12, LIB_A, false);
    evs[1] = piece(2000100, 9, 4, 4, 13, LIB_A, false);
    remove(bad);
    tu_rm_rf(bad_dir);
    tu_write_gflt_and_ndjson(bad, bad_dir, evs, 2, &m, 4, 1);
    expect_error(bad, "bad.gflt: event 2: stack 9 disagrees with an earlier piece on the frame count");
}

static void test_not_a_session(void **state)
{
    (void)state;
    gpufl__stack_table t;
    char err[1024] = "";
    assert_int_equal(gpufl__stack_table_load(dir, &t, err, sizeof err), GPUFL_ENOTFOUND);
    assert_non_null(strstr(err, "not a gpufl session"));
    assert_int_equal(t.n, 0);
}

/* How many times needle occurs in text. */
static size_t occurrences(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

#ifdef GFL_CLI
/* A function of this program, for a frame that symbolizes: its name is
 * what the output must (or must not) show. */
__attribute__((noinline)) void stack_table_origin_marker(void);
__attribute__((noinline)) void stack_table_origin_marker(void) { __asm__ volatile(""); }

/* Writes <dir>/<name>/session.json with host_info (machine_id left out
 * when NULL). */
static void write_session_json(const char *session_dir, const char *machine_id)
{
    char path[4200], text[512];
    snprintf(path, sizeof path, "%s/session.json", session_dir);
    if (machine_id)
        snprintf(text, sizeof text,
                 "{\"format\": \"gpufl-session\", \"format_version\": 1, \"host\": \"vm\", "
                 "\"host_info\": {\"cpu_count\": 2, \"machine_id\": \"%s\"}}\n",
                 machine_id);
    else
        snprintf(text, sizeof text,
                 "{\"format\": \"gpufl-session\", \"format_version\": 1, \"host\": \"vm\", "
                 "\"host_info\": {\"cpu_count\": 2}}\n");
    tu_write_file(path, text);
}

/* `gpufl CMD ARGS...` must succeed; its stdout and stderr go to out and err. */
static void run_cli(const char *cmd, const char *const *args, char **out, char **err)
{
    int rc = tu_run_subcommand(GFL_CLI, cmd, args, out, err);
    if (rc != 0)
        fail_msg("gpufl %s %s exited %d: %s", cmd, args[0], rc, *err);
}
#endif

/* Frames are named from this machine's module files only for a session
 * whose session.json carries this machine's id: a module at the same path
 * elsewhere (libc.so.6) is likely another build, and its names would be
 * wrong. Another id, no id, or no session.json: module+offset and one note
 * saying why; --symbolize-here names them anyway. Checked with a frame in
 * this test program, which does symbolize here. */
static void test_symbolized_only_when_recorded_here(void **state)
{
    (void)state;
#ifdef GFL_CLI
    if (!gpufl__symbolizer_available())
        skip();
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(len > 0);
    exe[len] = '\0';
    Dl_info info;
    struct link_map *lm = NULL;
    void *fn;
    void (*marker)(void) = stack_table_origin_marker;
    memcpy(&fn, &marker, sizeof fn);
    assert_true(dladdr1(fn, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm);
    /* as the recorder writes it: a return address, just past the call */
    uint64_t offset = (uint64_t)((uintptr_t)fn - (uintptr_t)lm->l_addr) + 1;

    gfl_event evs[2];
    evs[0] = piece(2000000, 1, 0, 1, 1, NULL, false);
    evs[0].u.stack.frames[0] = (gfl_stack_frame){gpufl__intern(exe), offset};
    evs[1] = kernel(2000100, 1);
    gpufl__session_meta m = session();
    char gflt[4200], sdir[4200], want_raw[4200];
    snprintf(gflt, sizeof gflt, "%s/lone.gflt", dir);
    snprintf(sdir, sizeof sdir, "%s/s", dir);
    tu_write_gflt_and_ndjson(gflt, sdir, evs, 2, &m, 4, 1);
    snprintf(want_raw, sizeof want_raw, "  #0  %s+0x%llx\n", exe, (unsigned long long)offset);
    const char *const note = "--symbolize-here uses them anyway";
    char *out, *err;

    char id[GPUFL__MACHINE_ID_MAX];
    if (gpufl__machine_id(id) == 0) {
        /* recorded here: named, no note */
        write_session_json(sdir, id);
        const char *args[] = {sdir, NULL};
        run_cli("stacks", args, &out, &err);
        assert_non_null(strstr(out, "  #0  stack_table_origin_marker"));
        assert_null(strstr(err, note));
        free(out);
        free(err);
        const char *report_args[] = {sdir, NULL};
        run_cli("report", report_args, &out, &err);
        assert_non_null(strstr(out, "#0  stack_table_origin_marker"));
        assert_null(strstr(out, note));
        free(out);
        free(err);
    }

    /* recorded on a machine of the same host name, another id */
    char other[GPUFL__MACHINE_ID_MAX];
    snprintf(other, sizeof other, "%s",
             strcmp(id, "0123456789abcdef0123456789abcdef") ? "0123456789abcdef0123456789abcdef"
                                                            : "fedcba9876543210fedcba9876543210");
    write_session_json(sdir, other);
    const char *args[] = {sdir, NULL};
    run_cli("stacks", args, &out, &err);
    assert_non_null(strstr(out, want_raw));
    assert_null(strstr(out, "stack_table_origin_marker"));
    assert_int_equal(occurrences(err, "recorded on another machine (machine id differs)"), 1);
    assert_int_equal(occurrences(err, note), 1);
    free(out);
    free(err);
    const char *report_args[] = {sdir, NULL};
    run_cli("report", report_args, &out, &err);
    assert_null(strstr(out, "stack_table_origin_marker"));
    assert_non_null(strstr(out, "#0  "));
    assert_int_equal(occurrences(out, "\n  note: recorded on another machine (machine id differs)"), 1);
    assert_string_equal(err, "");
    free(out);
    free(err);

    /* --symbolize-here: named again, no note */
    const char *here_args[] = {sdir, "--symbolize-here", NULL};
    run_cli("stacks", here_args, &out, &err);
    assert_non_null(strstr(out, "  #0  stack_table_origin_marker"));
    assert_null(strstr(err, note));
    free(out);
    free(err);
    run_cli("report", here_args, &out, &err);
    assert_non_null(strstr(out, "#0  stack_table_origin_marker"));
    assert_null(strstr(out, note));
    free(out);
    free(err);

    /* an older gpufl's session.json, without the id: not known, so raw */
    write_session_json(sdir, NULL);
    run_cli("stacks", args, &out, &err);
    assert_non_null(strstr(out, want_raw));
    assert_int_equal(occurrences(err, "has no host_info.machine_id"), 1);
    free(out);
    free(err);

    /* a lone .gflt, no session.json beside it: not known either */
    const char *lone_args[] = {gflt, NULL};
    run_cli("stacks", lone_args, &out, &err);
    assert_non_null(strstr(out, want_raw));
    assert_int_equal(occurrences(err, "no session.json beside it"), 1);
    free(out);
    free(err);

    /* --raw asks for module+offset: nothing to explain */
    const char *raw_args[] = {sdir, "--raw", NULL};
    run_cli("stacks", raw_args, &out, &err);
    assert_non_null(strstr(out, want_raw));
    assert_null(strstr(err, note));
    free(out);
    free(err);
#else
    skip();
#endif
}

/* The bundled session was recorded as trace.gflt only, with stack traces
 * on, on a GPU machine: its stacks load, and the CLI shows them. */
static void test_sample_session(void **state)
{
    (void)state;
    gpufl__stack_table t;
    load(SAMPLE_DIR, &t);
    assert_true(t.n > 10);
    uint64_t uses = 0;
    for (size_t i = 0; i < t.n; i++) {
        assert_int_equal(t.stacks[i].missing, 0);
        assert_true(t.stacks[i].total > 0);
        uses += t.stacks[i].uses;
    }
    assert_true(uses > 1000);
    gpufl__stack_table from_file;
    load(SAMPLE_DIR "/trace.gflt", &from_file);
    assert_same_table(&t, &from_file);
    gpufl__stack_table_free(&from_file);

#ifdef GFL_CLI
    char *out, *err;
    const char *args[] = {SAMPLE_DIR, NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "stacks", args, &out, &err), 0);
    char first[64];
    snprintf(first, sizeof first, "stack %u: %u frames", t.stacks[0].id, t.stacks[0].total);
    assert_non_null(strstr(out, first));
    size_t listed = 0;
    for (const char *p = out; (p = strstr(p, "\nstack ")) != NULL; p++)
        listed++;
    assert_int_equal(listed + 1, t.n); /* the first has no newline before it */
    assert_non_null(strstr(out, "libcublasLt.so.13+0x"));
    /* recorded on another machine by a gpufl that wrote no machine id: this
     * machine's libc must not name its frames (it did: "__gconv_transform_
     * internal_ucs4 at ./iconv/../iconv/skeleton.c:763"); every frame is
     * module+offset, and the note says why, once */
    assert_null(strstr(out, " at ./"));
    assert_null(strstr(out, "__gconv"));
    assert_non_null(strstr(out, "  #28 /lib/x86_64-linux-gnu/libc.so.6+0x"));
    if (gpufl__symbolizer_available()) {
        assert_int_equal(occurrences(err, "has no host_info.machine_id"), 1);
        assert_non_null(strstr(err, "--symbolize-here uses them anyway"));
    } else {
        assert_non_null(strstr(err, "without libdw"));
    }
    free(out);
    free(err);

    /* asked to use this machine's files anyway: the torch modules exist
     * only on the recording machine, said plainly */
    const char *here_args[] = {SAMPLE_DIR, "--symbolize-here", NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "stacks", here_args, &out, &err), 0);
    assert_null(strstr(err, "--symbolize-here uses them anyway"));
    if (access(TORCH_CPU, F_OK) != 0 && gpufl__symbolizer_available()) {
        assert_non_null(strstr(out, "not found on this machine"));
        assert_non_null(strstr(out, "\n  " TORCH_CPU "\n"));
    }
    free(out);
    free(err);

    /* the report shows frames under the hotspots, not only stack ids */
    const char *report_args[] = {SAMPLE_DIR, NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", report_args, &out, &err), 0);
    const char *stacks = strstr(out, "      stacks  ");
    assert_non_null(stacks);
    const char *frame = strstr(stacks, "\n                #0  ");
    assert_non_null(frame);
    assert_non_null(strstr(frame, "+0x"));
    assert_null(strstr(out, "(frames: gpufl stacks SESSION)"));
    assert_null(strstr(out, "__gconv"));
    if (gpufl__symbolizer_available())
        assert_int_equal(occurrences(out, "has no host_info.machine_id"), 1);
    free(out);
    free(err);
#endif
    gpufl__stack_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_formats_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_gflt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_ndjson, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symbolized_only_when_recorded_here, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_session, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
