/*
 * The Perfetto export (src/present/export/export_perfetto.c, present/timeline/,
 * pb_writer.c): a .perfetto-trace that ui.perfetto.dev and trace_processor
 * read.
 *
 * Why: a trace the UI rejects, or shows with slices that never end or
 * nest wrongly, is worse than none, and nothing in this repository reads
 * the format back. The output is decoded by an independent decoder,
 * `protoc --decode_raw` (Debian protobuf-compiler), and its structure
 * checked: the packets on one sequence whose first clears the incremental
 * state, a track descriptor per process, thread, device, stream and
 * counter (exactly the fixture's, export_fixture.h), on every track slice
 * begins and ends that balance and nest in time order, every flow started
 * at a launch call and ended at its work, every name interned before its
 * use, counter values per sample. Then the real sample session recorded on
 * an H200: every kernel, copy, memset and sync has one slice, at its
 * start; every launch with a known call has a flow that pairs up. The
 * slices of PyTorch's op ranges carry seq, forward_op and module.
 * Also: an unwritable output fails naming the file and leaves nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_fixture.h"
#include "flight_fixture.h"
#include "gpufl/trace.h"
#include "ops_fixture.h"
#include "present/export/export.h"
#include "session_file.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "export-perfetto")

/* ---- protoc --decode_raw's text, as a tree ----------------------------------
 * Lines are `N: value` (a varint in decimal, a fixed64 as 0x + 16 hex digits,
 * a string in C escapes) or `N {` ... `}` for a field protoc could parse as a
 * message. */

typedef struct pnode {
    uint32_t field;
    int msg;   /* a nested message; else a value */
    char *str; /* a string value (unescaped), or NULL */
    size_t str_len;
    uint64_t num; /* a number value */
    struct pnode *kids;
    size_t nkids, cap;
} pnode;

static pnode *add_kid(pnode *p)
{
    if (p->nkids == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->kids = realloc(p->kids, p->cap * sizeof *p->kids);
        assert_non_null(p->kids);
    }
    pnode *k = &p->kids[p->nkids++];
    memset(k, 0, sizeof *k);
    return k;
}

static void free_tree(pnode *p)
{
    for (size_t i = 0; i < p->nkids; i++)
        free_tree(&p->kids[i]);
    free(p->kids);
    free(p->str);
}

static char *unescape(const char *s, size_t *len)
{
    char *out = malloc(strlen(s) + 1);
    assert_non_null(out);
    size_t n = 0;
    while (*s && *s != '"') {
        if (*s != '\\') {
            out[n++] = *s++;
            continue;
        }
        s++;
        if (*s >= '0' && *s <= '7') {
            unsigned v = 0;
            for (int i = 0; i < 3 && *s >= '0' && *s <= '7'; i++)
                v = v * 8 + (unsigned)(*s++ - '0');
            out[n++] = (char)v;
            continue;
        }
        switch (*s) {
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        default: out[n++] = *s; break; /* \" \' \\ */
        }
        s++;
    }
    out[n] = '\0';
    *len = n;
    return out;
}

/* Parses the text; fails the test on a line it does not understand. */
static void parse_decoded(char *text, pnode *root)
{
    pnode *stack[64];
    size_t depth = 0;
    stack[0] = root;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        while (*line == ' ')
            line++;
        if (!strcmp(line, "}")) {
            assert_true(depth > 0);
            depth--;
            continue;
        }
        char *end;
        unsigned long field = strtoul(line, &end, 10);
        if (end == line)
            fail_msg("protoc output: unexpected line '%s'", line);
        pnode *k = add_kid(stack[depth]);
        k->field = (uint32_t)field;
        if (!strcmp(end, " {")) {
            k->msg = 1;
            assert_true(depth + 1 < 64);
            stack[++depth] = k;
        } else if (!strncmp(end, ": \"", 3)) {
            k->str = unescape(end + 3, &k->str_len);
        } else if (!strncmp(end, ": 0x", 4)) {
            k->num = strtoull(end + 4, NULL, 16);
        } else if (!strncmp(end, ": ", 2)) {
            k->num = strtoull(end + 2, NULL, 10);
        } else {
            fail_msg("protoc output: unexpected line '%s'", line);
        }
    }
    assert_int_equal(depth, 0);
}

static const pnode *child(const pnode *p, uint32_t field)
{
    for (size_t i = 0; p && i < p->nkids; i++)
        if (p->kids[i].field == field)
            return &p->kids[i];
    return NULL;
}

static uint64_t num(const pnode *p, uint32_t field, uint64_t absent)
{
    const pnode *c = child(p, field);
    return c ? c->num : absent;
}

/* Runs `protoc --decode_raw` on path and parses its output. */
static void decode(const char *path, pnode *root)
{
    char cmd[8600];
    snprintf(cmd, sizeof cmd, "protoc --decode_raw < '%s' > '%s.txt'", path, path);
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    char *err;
    int rc = tu_run(argv, NULL, &err);
    if (rc != 0)
        fail_msg("protoc --decode_raw %s: exit %d: %s", path, rc, err);
    free(err);
    char txt[8300];
    snprintf(txt, sizeof txt, "%s.txt", path);
    char *text = tu_read_file(txt, NULL);
    assert_non_null(text);
    memset(root, 0, sizeof *root);
    parse_decoded(text, root);
    free(text);
    unlink(txt);
}

/* ---- what a trace holds ----------------------------------------------------- */

typedef struct track {
    uint64_t uuid, parent;
    const char *name; /* NULL for threads and the process (named by descriptor) */
    int is_thread, is_process, is_counter;
    uint64_t tid, pid;
} track;

typedef struct tevent {
    uint64_t ts, track, order;
    unsigned type;
    const char *name;         /* interned name, begins and instants */
    uint64_t annotations[16]; /* value by debug annotation iid; UINT64_MAX absent */
} tevent;

typedef struct ptrace {
    pnode root;
    track *tracks;
    size_t ntracks;
    tevent *events;
    size_t nevents;
    char **names; /* by iid */
    size_t nnames;
    char **values; /* interned debug annotation strings, by iid */
    size_t nvalues;
    char **anames; /* interned debug annotation names, by iid */
    size_t nanames;
    uint64_t *flows, *terminating;
    size_t nflows, nterminating;
    size_t begins, ends, instants, counters;
} ptrace;

static const track *find_track(const ptrace *p, uint64_t uuid)
{
    for (size_t i = 0; i < p->ntracks; i++)
        if (p->tracks[i].uuid == uuid)
            return &p->tracks[i];
    return NULL;
}

static const track *track_named(const ptrace *p, const char *name)
{
    for (size_t i = 0; i < p->ntracks; i++)
        if (p->tracks[i].name && !strcmp(p->tracks[i].name, name))
            return &p->tracks[i];
    return NULL;
}

static int name_interned(const ptrace *p, const char *name)
{
    for (size_t i = 0; i < p->nnames; i++)
        if (p->names[i] && !strcmp(p->names[i], name))
            return 1;
    return 0;
}

/* An InternedData entry {iid = 1, text = 2} into table[iid]. */
static void intern(char ***table, size_t *n, const pnode *e)
{
    uint64_t iid = num(e, 1, 0);
    const pnode *text = child(e, 2);
    assert_true(iid > 0);
    if (iid >= *n) {
        size_t cap = (iid + 1) * 2;
        *table = realloc(*table, cap * sizeof **table);
        assert_non_null(*table);
        memset(*table + *n, 0, (cap - *n) * sizeof **table);
        *n = cap;
    }
    assert_null((*table)[iid]); /* each iid interned once */
    (*table)[iid] = text && text->str ? text->str : "(not shown as a string by protoc)";
}

/* Walks the packets in file order, checking what holds for any export. */
static void load(const char *path, ptrace *p)
{
    memset(p, 0, sizeof *p);
    decode(path, &p->root);
    size_t n = p->root.nkids;
    assert_true(n >= 2);
    p->tracks = calloc(n, sizeof *p->tracks);
    p->events = calloc(n, sizeof *p->events);
    p->flows = calloc(n * 4 + 1, sizeof *p->flows);
    p->terminating = calloc(n + 1, sizeof *p->terminating);
    assert_true(p->tracks && p->events && p->flows && p->terminating);
    for (size_t i = 0; i < n; i++) {
        const pnode *pk = &p->root.kids[i];
        assert_int_equal(pk->field, 1);      /* Trace.packet */
        assert_int_equal(num(pk, 10, 0), 1); /* one sequence */
        uint64_t flags = num(pk, 13, 0);
        if (i == 0) {
            /* the first packet clears the incremental state and sets the clock */
            assert_int_equal(flags & 1, 1);
            assert_int_equal(num(pk, 87, 0), 1);
            const pnode *cs = child(pk, 6);
            assert_non_null(cs);
            assert_int_equal(num(cs, 2, 0), 3); /* primary clock MONOTONIC */
        }
        size_t ninterned = 0;
        for (size_t j = 0; j < pk->nkids; j++)
            ninterned += pk->kids[j].field == 12;
        assert_true(ninterned <= 1); /* readers keep only the last one */
        const pnode *interned = child(pk, 12);
        for (size_t j = 0; interned && j < interned->nkids; j++) {
            const pnode *e = &interned->kids[j];
            if (e->field == 2) /* event names */
                intern(&p->names, &p->nnames, e);
            else if (e->field == 29) /* debug annotation string values */
                intern(&p->values, &p->nvalues, e);
            else if (e->field == 3) /* debug annotation names */
                intern(&p->anames, &p->nanames, e);
        }
        const pnode *td = child(pk, 60);
        if (td) {
            track *t = &p->tracks[p->ntracks++];
            t->uuid = num(td, 1, 0);
            assert_true(t->uuid != 0);
            assert_true(find_track(p, t->uuid) == t); /* uuids are unique */
            t->parent = num(td, 5, 0);
            const pnode *nm = child(td, 2);
            t->name = nm ? nm->str : NULL;
            const pnode *th = child(td, 4), *pr = child(td, 3);
            t->is_thread = th != NULL;
            t->is_process = pr != NULL;
            t->is_counter = child(td, 8) != NULL;
            if (th) {
                t->pid = num(th, 1, 0);
                t->tid = num(th, 2, 0);
            }
            if (pr) {
                t->pid = num(pr, 1, 0);
                t->name = child(pr, 6) ? child(pr, 6)->str : NULL;
            }
            if (t->parent)
                assert_non_null(find_track(p, t->parent)); /* parents come first */
        }
        const pnode *te = child(pk, 11);
        if (te) {
            assert_int_equal(flags, 2); /* SEQ_NEEDS_INCREMENTAL_STATE */
            tevent *e = &p->events[p->nevents++];
            e->ts = num(pk, 8, 0);
            e->track = num(te, 11, 0);
            e->type = (unsigned)num(te, 9, 0);
            e->order = p->nevents;
            if (!find_track(p, e->track))
                fail_msg("an event on track %llu, not described before it", (unsigned long long)e->track);
            for (int a = 0; a < 16; a++)
                e->annotations[a] = UINT64_MAX;
            if (e->type == 1 || e->type == 3) {
                uint64_t iid = num(te, 10, 0);
                if (iid == 0 || iid >= p->nnames || !p->names[iid])
                    fail_msg("name iid %llu used before it was interned", (unsigned long long)iid);
                e->name = p->names[iid];
            }
            for (size_t j = 0; j < te->nkids; j++) {
                const pnode *f = &te->kids[j];
                if (f->field == 47)
                    p->flows[p->nflows++] = f->num;
                else if (f->field == 48)
                    p->terminating[p->nterminating++] = f->num;
                else if (f->field == 4 && num(f, 1, 0) < 16)
                    e->annotations[num(f, 1, 0)] = child(f, 17) ? num(f, 17, 0) : num(f, 3, 0);
            }
            switch (e->type) {
            case 1: p->begins++; break;
            case 2: p->ends++; break;
            case 3: p->instants++; break;
            case 4:
                p->counters++;
                assert_true(find_track(p, e->track)->is_counter);
                break;
            default: fail_msg("track event of type %u", e->type);
            }
        }
    }
}

static void free_ptrace(ptrace *p)
{
    free_tree(&p->root);
    free(p->tracks);
    free(p->events);
    free(p->names);
    free(p->values);
    free(p->anames);
    free(p->flows);
    free(p->terminating);
}

static int by_track_ts(const void *a, const void *b)
{
    const tevent *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* On every track, in time order: each end closes an open slice that began
 * at or before it, and nothing stays open. */
static void check_balance(ptrace *p)
{
    tevent *ev = malloc((p->nevents + 1) * sizeof *ev);
    assert_non_null(ev);
    memcpy(ev, p->events, p->nevents * sizeof *ev);
    qsort(ev, p->nevents, sizeof *ev, by_track_ts);
    uint64_t *open = malloc((p->nevents + 1) * sizeof *open);
    size_t depth = 0;
    for (size_t i = 0; i < p->nevents; i++) {
        if (i > 0 && ev[i].track != ev[i - 1].track && depth != 0)
            fail_msg("track %llu: %zu slices never end", (unsigned long long)ev[i - 1].track, depth);
        if (i > 0 && ev[i].track != ev[i - 1].track)
            depth = 0;
        if (ev[i].type == 1) {
            open[depth++] = ev[i].ts;
        } else if (ev[i].type == 2) {
            if (depth == 0)
                fail_msg("track %llu: an end at %llu with no slice open", (unsigned long long)ev[i].track,
                         (unsigned long long)ev[i].ts);
            assert_true(open[--depth] <= ev[i].ts);
        }
    }
    assert_int_equal(depth, 0);
    free(open);
    free(ev);
    assert_int_equal(p->begins, p->ends);
}

/* Every flow starts once and ends once. */
static void check_flows(ptrace *p)
{
    assert_int_equal(p->nflows, p->nterminating);
    qsort(p->flows, p->nflows, sizeof *p->flows, cmp_u64);
    qsort(p->terminating, p->nterminating, sizeof *p->terminating, cmp_u64);
    for (size_t i = 0; i < p->nflows; i++) {
        assert_int_equal(p->flows[i], p->terminating[i]);
        if (i)
            assert_true(p->flows[i] != p->flows[i - 1]);
    }
}

static const tevent *begin_named(const ptrace *p, const char *name)
{
    for (size_t i = 0; i < p->nevents; i++)
        if (p->events[i].type == 1 && !strcmp(p->events[i].name, name))
            return &p->events[i];
    return NULL;
}

/* The end that closes begin b (the next end on its track at the same depth). */
static uint64_t end_of(const ptrace *p, const tevent *b)
{
    int depth = 0;
    for (size_t i = (size_t)(b - p->events) + 1; i < p->nevents; i++) {
        if (p->events[i].track != b->track)
            continue;
        if (p->events[i].type == 1)
            depth++;
        else if (p->events[i].type == 2 && depth-- == 0)
            return p->events[i].ts;
    }
    fail_msg("slice %s never ends", b->name);
    return 0;
}

static void test_fixture(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    char out[4200];
    snprintf(out, sizeof out, "%s/fixture.perfetto-trace", work);
    gpufl__export_result r;
    tu_export_session(session, gpufl__export_perfetto, out, &r);
    assert_int_equal(r.timeline.tracks, FIX_TRACKS);
    assert_int_equal(r.timeline.lanes, FIX_LANES);
    assert_int_equal(r.timeline.flows, FIX_FLOWS);

    ptrace p;
    load(out, &p);
    assert_int_equal(p.ntracks, FIX_TRACKS);
    assert_int_equal(r.packets, p.root.nkids);
    size_t threads = 0, counters = 0, processes = 0;
    for (size_t i = 0; i < p.ntracks; i++) {
        const track *t = &p.tracks[i];
        threads += t->is_thread;
        counters += t->is_counter;
        processes += t->is_process;
        if (t->is_thread) {
            assert_true(t->tid == 101 || t->tid == 202);
            assert_int_equal(t->pid, 4242);
        }
        if (t->is_process) {
            assert_int_equal(t->pid, 4242);
            assert_string_equal(t->name, FIX_APP);
        }
    }
    assert_int_equal(processes, 1);
    assert_int_equal(threads, FIX_THREAD_TRACKS);
    assert_int_equal(counters, FIX_COUNTER_TRACKS);
    const track *gpu = track_named(&p, "GPU 0 (NVIDIA H200)");
    assert_non_null(gpu);
    const track *s7 = track_named(&p, "GPU 0 stream 7"), *s8 = track_named(&p, "GPU 0 stream 8");
    assert_non_null(s7);
    assert_non_null(s8);
    assert_int_equal(s7->parent, gpu->uuid);
    assert_non_null(track_named(&p, "GPU 0 stream 7 syncs"));
    assert_int_equal(track_named(&p, "GPU 0 utilization (%)")->parent, gpu->uuid);
    assert_non_null(track_named(&p, "GPU 0 power (W)"));
    assert_non_null(track_named(&p, "host RSS (bytes)"));
    const track *lane = track_named(&p, "thread 101 #2");
    assert_non_null(lane);

    assert_int_equal(p.begins, FIX_SLICES);
    assert_int_equal(p.instants, FIX_INSTANTS);
    assert_int_equal(p.counters, FIX_COUNTER_VALUES);
    check_balance(&p);
    assert_int_equal(p.nflows, FIX_FLOWS);
    check_flows(&p);

    /* names, interned once each, with their text as recorded */
    static const char *const names[] = {"step",
                                        "forward, \"fwd\"\n",
                                        "loader\001",
                                        "open",
                                        "gemm<float, 128>",
                                        "launch gemm<float, 128>",
                                        "softmax",
                                        "relu",
                                        "memcpy HtoD",
                                        "memcpy HtoD (call)",
                                        "memset",
                                        "sync stream",
                                        "attention op",
                                        "cross",
                                        "checkpoint"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!name_interned(&p, names[i]))
            fail_msg("name '%s' not interned", names[i]);

    /* a kernel: on its stream, at its times, ending a flow from its call */
    const tevent *gemm = begin_named(&p, "gemm<float, 128>");
    assert_int_equal(gemm->track, s7->uuid);
    assert_int_equal(gemm->ts, FIX_US(250));
    assert_int_equal(end_of(&p, gemm), FIX_US(350));
    assert_int_equal(gemm->annotations[1], 11); /* correlation */
    uint64_t launch = gemm->annotations[2];     /* an interned string */
    assert_true(launch < p.nvalues && p.values[launch]);
    assert_string_equal(p.values[launch], "grid 132x1x1, block 256x1x1, 64 registers");
    const tevent *call = begin_named(&p, "launch gemm<float, 128>");
    const track *caller = find_track(&p, call->track);
    assert_true(caller->is_thread);
    assert_int_equal(caller->tid, 101);
    assert_int_equal(call->ts, FIX_US(210));
    assert_int_equal(end_of(&p, call), FIX_US(215));
    /* the range that overlapped its parent went to the lane; the unended
     * scope closes at the session's end */
    assert_int_equal(begin_named(&p, "cross")->track, lane->uuid);
    assert_int_equal(end_of(&p, begin_named(&p, "open")), FIX_US(2000));
    free_ptrace(&p);
    free(session);
}

/* The real session: every piece of device work has its slice, every
 * launch its flow. */
static void test_train_sample(void **state)
{
    (void)state;
    char out[4200];
    snprintf(out, sizeof out, "%s/train.perfetto-trace", work);
    gpufl__export_result r;
    tu_export_session(TU_TRAIN_SAMPLE, gpufl__export_perfetto, out, &r);
    gpufl_trace *t = tu_trace_open(TU_TRAIN_SAMPLE);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    const gpufl_trace_transfers *c = gpufl_trace_get_copies(t), *m = gpufl_trace_get_memsets(t);
    const gpufl_trace_syncs *y = gpufl_trace_get_syncs(t);
    const gpufl_trace_callers *callers = gpufl_trace_get_callers(t);
    assert_true(k->n > 1000);
    size_t launches = 0;
    for (size_t i = 0; i < k->n; i++)
        launches += k->api_lead_ns[i] != 0 && callers->tid[k->caller_row[i]] != 0;
    for (size_t i = 0; i < c->n; i++)
        launches += c->api_lead_ns[i] != 0 && callers->tid[c->caller_row[i]] != 0;
    for (size_t i = 0; i < m->n; i++)
        launches += m->api_lead_ns[i] != 0 && callers->tid[m->caller_row[i]] != 0;
    assert_true(launches > 1000);

    ptrace p;
    load(out, &p);
    check_balance(&p);
    assert_int_equal(p.nflows, launches);
    assert_int_equal(r.timeline.flows, launches);
    check_flows(&p);
    /* slices on device tracks: one per kernel, copy, memset and sync; the
     * kernels' (those with a launch annotation) at their start times */
    size_t device_slices = 0, nk = 0;
    uint64_t *starts = malloc(k->n * sizeof *starts), *want = malloc(k->n * sizeof *want);
    assert_true(starts && want);
    for (size_t i = 0; i < p.nevents; i++) {
        const tevent *e = &p.events[i];
        if (e->type != 1 || find_track(&p, e->track)->is_thread)
            continue;
        const track *tr = find_track(&p, e->track);
        if (!tr->name || strncmp(tr->name, "GPU ", 4))
            continue; /* a lane of a thread */
        device_slices++;
        if (e->annotations[2] != UINT64_MAX) {
            assert_true(nk < k->n);
            starts[nk++] = e->ts;
        }
    }
    assert_int_equal(device_slices, k->n + c->n + m->n + y->n);
    assert_int_equal(nk, k->n);
    memcpy(want, k->start_ns, k->n * sizeof *want);
    qsort(starts, nk, sizeof *starts, cmp_u64);
    qsort(want, nk, sizeof *want, cmp_u64);
    assert_memory_equal(starts, want, nk * sizeof *want);
    free(starts);
    free(want);
    free_ptrace(&p);
    gpufl_trace_close(t);
}

/* PyTorch's op ranges carry their seq, forward op and module
 * (ops_fixture.h); the annotation names are interned when first used. */
static void test_torch_ops(void **state)
{
    (void)state;
    af f = {0};
    of_torch_session(&f);
    gpufl_trace *t = af_open(&f, work, "torch");
    char out[4200], err[1024];
    snprintf(out, sizeof out, "%s/torch.perfetto-trace", work);
    gpufl__export_result r;
    assert_int_equal(gpufl__export_perfetto(t, out, &r, err, sizeof err), 0);
    ptrace p;
    load(out, &p);
    check_balance(&p);
    assert_true(p.nanames > 7);
    assert_string_equal(p.anames[5], "seq");
    assert_string_equal(p.anames[6], "forward_op");
    assert_string_equal(p.anames[7], "module");
    const tevent *mm = begin_named(&p, "aten::mm");
    assert_non_null(mm);
    assert_int_equal(mm->annotations[5], UINT64_MAX); /* no seq of its own */
    assert_string_equal(p.values[mm->annotations[6]], "aten::addmm");
    assert_string_equal(p.values[mm->annotations[7]], "Net.fc");
    const tevent *bwd = begin_named(&p, "AddmmBackward0");
    assert_int_equal(bwd->annotations[5], 6);
    assert_int_equal(bwd->annotations[6], mm->annotations[6]); /* interned once */
    const tevent *relu = begin_named(&p, "aten::relu");
    assert_int_equal(relu->annotations[5], 7);
    assert_int_equal(relu->annotations[6], UINT64_MAX);
    assert_string_equal(p.values[relu->annotations[7]], "Net");
    const tevent *mod = begin_named(&p, "nn.Module: Net");
    for (int a = 5; a < 8; a++)
        assert_int_equal(mod->annotations[a], UINT64_MAX);
    free_ptrace(&p);
    gpufl_trace_close(t);
}

/* Trace windows as slices and triggers as instants on a track "gpufl",
 * at the times the reader gives (an unended window runs to the session's
 * end and says so). */
static void test_flight(void **state)
{
    (void)state;
    char path[4096], out[4200];
    ff_write(work, "flight", path);
    snprintf(out, sizeof out, "%s/flight.perfetto-trace", work);
    gpufl__export_result r;
    tu_export_session(path, gpufl__export_perfetto, out, &r);
    ptrace p;
    load(out, &p);
    check_balance(&p);
    const track *fl = track_named(&p, "gpufl");
    assert_non_null(fl);
    assert_int_equal(fl->parent, 1); /* under the process */
    size_t windows = 0, triggers = 0;
    for (size_t i = 0; i < p.nevents; i++) {
        const tevent *e = &p.events[i];
        if (e->track != fl->uuid || e->type == 2)
            continue;
        if (e->type == 1) {
            assert_string_equal(e->name, "trace window");
            assert_int_equal(e->ts, windows ? 7000000 : 2000000);
            assert_int_equal(end_of(&p, e), windows ? 11000000 : 4000000);
            /* "unended" (a bool, which this reader does not decode): present only on the second */
            assert_int_equal(e->annotations[4] != UINT64_MAX, windows == 1);
            windows++;
        } else {
            assert_int_equal(e->type, 3);
            assert_string_equal(e->name, triggers ? "dump" : "oom");
            assert_int_equal(e->ts, triggers ? 8000000 : 6000000);
            triggers++;
        }
    }
    assert_int_equal(windows, 2);
    assert_int_equal(triggers, 2);
    free_ptrace(&p);
}

static void test_unwritable(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    gpufl_trace *t = tu_trace_open(session);
    char err[1024];
    char out[4200];
    snprintf(out, sizeof out, "%s/no/such/dir/x.perfetto-trace", work);
    gpufl__export_result r;
    assert_int_equal(gpufl__export_perfetto(t, out, &r, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, out));
    assert_false(tu_exists(out));
    gpufl_trace_close(t);
    free(session);
}

int main(void)
{
    const char *argv[] = {"/bin/sh", "-c", "command -v protoc", NULL};
    if (tu_run(argv, NULL, NULL) != 0) {
        fprintf(stderr, "protoc not found: this test decodes the export with it "
                        "(Debian protobuf-compiler; tools/install-deps.sh installs it)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_train_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torch_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
