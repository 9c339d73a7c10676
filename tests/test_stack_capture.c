/*
 * CPU stack capture (src/backend/cupti/stack_capture.h).
 *
 * Capture runs on the program's thread at every launch, so a wrong id
 * silently blames the wrong code and a lost definition leaves ids nobody
 * can read. Checked here: distinct call sites get distinct ids and one site
 * always the same id; the definition (pushed through a fake host that
 * records what it gets) names the calling function first, leaves gpufl's
 * own frames out, cuts deep stacks at 64 frames and says so; a definition
 * refused by a full ring is finished by a later capture, without repeating
 * pieces already pushed; a full table returns 0 and counts it; 8 threads
 * meeting the same new stacks at once agree on every id and define each
 * once (also under TSan). The last case records through a real session
 * (a do-nothing plugin hands over its host), reads device.log back, and
 * runs `gpufl stacks` on it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cupti/stack_capture.h"
#include "core/machine_id.h"
#include "format/ndjson_format.h"
#include "gpufl/gpufl.h"
#include "read/stack_table.h"
#include "read/symbolize.h"
#include "test_util.h"

/* ---- a fake host that records pushes ------------------------------------------ */

#define MAX_EVENTS 4096
#define MAX_STRINGS 256

static struct {
    pthread_mutex_t lock;
    gfl_event events[MAX_EVENTS];
    size_t n;
    char *strings[MAX_STRINGS]; /* id i + 1 */
    uint32_t nstrings;
    unsigned accept_then_refuse; /* pushes to accept before refusing starts */
    unsigned refuse;             /* pushes to refuse then */
    unsigned refused;
    _Atomic uint64_t now;
    unsigned logs;
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int fake_push(const gfl_event *ev)
{
    pthread_mutex_lock(&fake.lock);
    int rc = 0;
    if (fake.accept_then_refuse)
        fake.accept_then_refuse--;
    else if (fake.refuse) {
        fake.refuse--;
        fake.refused++;
        rc = -1;
    }
    if (rc == 0) {
        assert_true(fake.n < MAX_EVENTS);
        fake.events[fake.n++] = *ev;
    }
    pthread_mutex_unlock(&fake.lock);
    return rc;
}

static uint32_t fake_intern(const char *s, size_t n)
{
    pthread_mutex_lock(&fake.lock);
    uint32_t id = 0;
    for (uint32_t i = 0; i < fake.nstrings && !id; i++)
        if (strlen(fake.strings[i]) == n && !memcmp(fake.strings[i], s, n))
            id = i + 1;
    if (!id) {
        assert_true(fake.nstrings < MAX_STRINGS);
        fake.strings[fake.nstrings] = strndup(s, n);
        id = ++fake.nstrings;
    }
    pthread_mutex_unlock(&fake.lock);
    return id;
}

static const char *fake_string(uint32_t id) { return id && id <= fake.nstrings ? fake.strings[id - 1] : NULL; }

static uint64_t fake_now(void) { return atomic_load(&fake.now); }

static void fake_log(int level, const char *message)
{
    (void)level;
    (void)message;
    fake.logs++;
}

static const gpufl_plugin_host fake_host = {
    .size = sizeof fake_host,
    .abi = GPUFL_PLUGIN_ABI,
    .now_ns = fake_now,
    .intern = fake_intern,
    .push = fake_push,
    .log = fake_log,
};

static void fake_reset(void)
{
    fake.n = 0;
    fake.accept_then_refuse = fake.refuse = fake.refused = 0;
    atomic_store(&fake.now, 1000000000ull);
}

/* One stack assembled from the recorded pieces of `id`. */
typedef struct assembled {
    unsigned pieces, total, truncated;
    gfl_stack_frame frames[GFL_STACK_MAX_FRAMES];
} assembled;

static void assemble(uint32_t id, assembled *a)
{
    bool seen[GFL_STACK_MAX_FRAMES] = {false};
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < fake.n; i++) {
        const gfl_event *ev = &fake.events[i];
        if (ev->h.type != GFL_EV_STACK || ev->u.stack.id != id)
            continue;
        const gfl_stack_payload *s = &ev->u.stack;
        assert_true(ev->h.ts != 0);
        if (a->pieces)
            assert_int_equal(s->total, a->total);
        a->pieces++;
        a->total = s->total;
        a->truncated = s->truncated;
        assert_true(s->count <= GFL_STACK_FRAMES_PER_EVENT);
        assert_true(s->first + s->count <= s->total);
        assert_true(s->count == GFL_STACK_FRAMES_PER_EVENT || s->first + s->count == s->total);
        for (unsigned f = 0; f < s->count; f++) {
            assert_false(seen[s->first + f]); /* no piece pushed twice */
            seen[s->first + f] = true;
            a->frames[s->first + f] = s->frames[f];
        }
    }
    for (unsigned f = 0; f < a->total; f++)
        assert_true(seen[f]);
}

/* ---- call sites ---------------------------------------------------------------- */

typedef uint32_t (*site_fn)(void);
static _Atomic unsigned sink;
/* Loop bounds the compiler cannot unroll by (each unrolled copy of a call
 * would be a stack of its own). */
static volatile int n_steps = 5, n_rounds = 101, n_twice = 2;

/* Distinct bodies (the store), so the compiler cannot fold the sites into
 * one function; the volatile keeps the capture from being a tail call. */
#define SITE(name, n)                                                                                                  \
    static __attribute__((noinline)) uint32_t name(void)                                                               \
    {                                                                                                                  \
        atomic_store_explicit(&sink, n, memory_order_relaxed);                                                         \
        volatile uint32_t id = gpufl__stack_capture();                                                                 \
        return id;                                                                                                     \
    }
SITE(site_a, 1)
SITE(site_b, 2)
SITE(site_c, 3)
SITE(site_d, 4)
SITE(site_e, 5)

static __attribute__((noinline)) uint32_t recurse(int depth)
{
    volatile uint32_t id = depth <= 0 ? site_a() : recurse(depth - 1);
    return id;
}
static __attribute__((noinline)) uint32_t deep_20(void)
{
    volatile uint32_t id = recurse(20);
    return id;
}
static __attribute__((noinline)) uint32_t deep_40(void)
{
    volatile uint32_t id = recurse(40);
    return id;
}
static __attribute__((noinline)) uint32_t deep_100(void)
{
    volatile uint32_t id = recurse(100);
    return id;
}

/* Name of the function around a recorded frame (a return address). */
static void frame_function(const gfl_stack_frame *f, char *buf, size_t len)
{
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    assert_non_null(s);
    gpufl__symbol sym;
    gpufl__symbolize(s, fake_string(f->module), f->offset - 1, &sym);
    snprintf(buf, len, "%s", sym.function);
    gpufl__symbolizer_free(s);
}

/* The frame is a return address inside fn (checked by name with libdw,
 * else by a rough range: within 256 bytes of fn's start). */
static void assert_frame_in(const gfl_stack_frame *f, uintptr_t fn, const char *name)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    assert_non_null(fake_string(f->module));
    assert_string_equal(fake_string(f->module), exe);
    if (gpufl__symbolizer_available()) {
        char got[1024];
        frame_function(f, got, sizeof got);
        assert_string_equal(got, name);
        return;
    }
    Dl_info info;
    struct link_map *lm = NULL;
    assert_true(dladdr1((void *)fn, &info, (void **)&lm, RTLD_DL_LINKMAP));
    uint64_t start = (uint64_t)fn - lm->l_addr;
    assert_true(f->offset > start && f->offset < start + 256);
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    int rc = gpufl__stack_init(&fake_host, 1024);
    if (rc == GPUFL_EUNSUPPORTED) {
        fprintf(stderr, "libunwind.so.8 is not installed: nothing to test\n");
        exit(77);
    }
    assert_int_equal(rc, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gpufl__stack_shutdown();
    return 0;
}

/* ---- cases ------------------------------------------------------------------------ */

/* A stack is the whole chain of return addresses: the same site function
 * called from two places in a test is two stacks. Repeats therefore run in
 * loops, from one call instruction. */
static void test_sites_get_distinct_stable_ids(void **state)
{
    (void)state;
    static const site_fn fns[] = {site_a, site_b, site_c};
    static uint32_t got[101][3];
    /* no branch on the round inside the loop: a compiler that peels the
     * first round duplicates the call, and so the stack */
    for (int r = 0; r < n_rounds; r++)
        for (int i = 0; i < 3; i++)
            got[r][i] = fns[i]();
    uint32_t ids[3] = {got[0][0], got[0][1], got[0][2]};
    for (int r = 0; r < n_rounds; r++)
        for (int i = 0; i < 3; i++) {
            assert_true(got[r][i] != 0);
            assert_int_equal(got[r][i], ids[i]);
        }
    assert_true(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    uint32_t other = site_a(); /* site_a again, from another call site */
    assert_true(other != 0 && other != ids[0] && other != ids[1] && other != ids[2]);
    gfl_stack_stats st;
    gpufl__stack_stats_get(&st);
    assert_int_equal(st.captures, 304);
    assert_int_equal(st.unique, 4);
    assert_int_equal(st.defined, 4);
    assert_int_equal(st.failures, 0);

    /* each defined once, the calling function first */
    assembled s;
    assemble(ids[0], &s);
    assert_int_equal(s.pieces, 1);
    assert_true(s.total >= 2 && s.total <= 12);
    assert_false(s.truncated);
    assert_frame_in(&s.frames[0], (uintptr_t)site_a, "site_a");
    assert_frame_in(&s.frames[1], (uintptr_t)test_sites_get_distinct_stable_ids, "test_sites_get_distinct_stable_ids");
    assemble(ids[1], &s);
    assert_frame_in(&s.frames[0], (uintptr_t)site_b, "site_b");
    assemble(ids[2], &s);
    assert_frame_in(&s.frames[0], (uintptr_t)site_c, "site_c");
    assembled o;
    assemble(other, &o);
    assert_frame_in(&o.frames[0], (uintptr_t)site_a, "site_a");
    assert_true(o.frames[1].offset != s.frames[1].offset); /* the calls differ */
    assert_int_equal(o.total, s.total);
}

static void test_deep_stacks_split_and_truncate(void **state)
{
    (void)state;
    uint32_t d20 = deep_20(), d40 = deep_40(), d100 = deep_100();
    assert_true(d20 && d40 && d100);
    assert_true(d20 != d40 && d40 != d100);
    assembled s;
    assemble(d40, &s);
    assert_true(s.total >= 44 && s.total < GFL_STACK_MAX_FRAMES); /* site_a, 41 recurse, deep_40, ... */
    assert_int_equal(s.pieces, (s.total + 11) / 12);
    assert_false(s.truncated);
    assert_frame_in(&s.frames[0], (uintptr_t)site_a, "site_a");
    assemble(d100, &s);
    assert_int_equal(s.total, GFL_STACK_MAX_FRAMES);
    assert_true(s.truncated);
    assert_int_equal(s.pieces, 6);
    assert_frame_in(&s.frames[0], (uintptr_t)site_a, "site_a");
    /* [1] is recurse(0) calling site_a, then recursive calls: one return address */
    for (unsigned i = 2; i < s.total; i++)
        assert_int_equal(s.frames[i].offset, s.frames[2].offset);
    assert_true(s.frames[1].offset != s.frames[2].offset);
}

static void test_internal_frames_left_out(void **state)
{
    (void)state;
    void *lib = dlopen(GFL_STACKTEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    uint32_t (*call)(site_fn);
    void *sym = dlsym(lib, "stacktest_call");
    assert_non_null(sym);
    memcpy(&call, &sym, sizeof sym);
    /* stack: stacktest_call (libgpufl_stacktest.so) <- this test */
    uint32_t id = call(gpufl__stack_capture);
    assert_true(id != 0);
    assembled s;
    assemble(id, &s);
    assert_frame_in(&s.frames[0], (uintptr_t)test_internal_frames_left_out, "test_internal_frames_left_out");
    dlclose(lib);
}

/* The steps of the full-ring case, around one capture each (the capture
 * stays one call instruction: branches around it could make the compiler
 * duplicate it, and each copy is a different stack). */
static void ring_step_before(int step)
{
    switch (step) {
    case 0: /* one piece accepted, the second refused: 40 frames are 4+ pieces */
        fake.accept_then_refuse = 1;
        fake.refuse = 1;
        break;
    case 2: /* later, still refused: one try, one more refusal */
        atomic_fetch_add(&fake.now, 2000000);
        fake.refuse = 1;
        break;
    case 3: /* later again, room */
    case 4: atomic_fetch_add(&fake.now, 2000000); break;
    }
}

static void ring_step_after(int step, uint32_t id)
{
    gfl_stack_stats st;
    gpufl__stack_stats_get(&st);
    assembled s;
    switch (step) {
    case 0:
        assert_int_equal(fake.refused, 1);
        assert_int_equal(st.define_retries, 1);
        assert_int_equal(st.defined, 0);
        assert_int_equal(fake.n, 1);
        break;
    case 1: /* within the retry delay: the id, no new push */ assert_int_equal(fake.n, 1); break;
    case 2:
        assert_int_equal(fake.refused, 2);
        assert_int_equal(fake.n, 1);
        assert_int_equal(st.define_retries, 2);
        break;
    case 3: /* the remaining pieces, none repeated */
    case 4: /* and never again */
        assemble(id, &s);
        assert_true(s.total > 40);
        assert_int_equal(s.pieces, (s.total + 11) / 12);
        assert_int_equal(fake.n, s.pieces);
        assert_int_equal(st.defined, 1);
        assert_int_equal(st.define_retries, 2);
        break;
    }
}

static void test_full_ring_defines_later(void **state)
{
    (void)state;
    uint32_t first = 0;
    for (int step = 0; step < n_steps; step++) {
        ring_step_before(step);
        uint32_t id = deep_40();
        if (!first)
            first = id;
        assert_true(id != 0);
        assert_int_equal(id, first);
        ring_step_after(step, id);
    }
}

static void test_full_table_returns_zero(void **state)
{
    (void)state;
    gpufl__stack_shutdown();
    fake_reset();
    assert_int_equal(gpufl__stack_init(&fake_host, 3), 0);
    static const site_fn fns[] = {site_a, site_b, site_c, site_d, site_e};
    uint32_t got[2][5];
    for (int r = 0; r < n_twice; r++) /* no branch on r: see the first test */
        for (int i = 0; i < 5; i++)
            got[r][i] = fns[i]();
    uint32_t ids[5];
    for (int i = 0; i < 5; i++) {
        ids[i] = got[0][i];
        assert_int_equal(got[1][i], ids[i]); /* known stacks are still found */
    }
    assert_true(ids[0] && ids[1] && ids[2]);
    assert_int_equal(ids[3], 0);
    assert_int_equal(ids[4], 0);
    gfl_stack_stats st;
    gpufl__stack_stats_get(&st);
    assert_int_equal(st.unique, 3);
    assert_int_equal(st.table_full, 4);
    assert_int_equal(st.failures, 4);
    assert_int_equal(st.captures, 10);
}

static void test_off_outside_a_session(void **state)
{
    (void)state;
    gpufl__stack_shutdown();
    assert_int_equal(site_a(), 0);
    assert_int_equal(gpufl__stack_init(NULL, 10), GPUFL_EINVAL);
    assert_int_equal(gpufl__stack_init(&fake_host, 0), GPUFL_EINVAL);
    assert_int_equal(gpufl__stack_init(&fake_host, GFL_STACK_MAX_STACKS + 1), GPUFL_EINVAL);
    assert_int_equal(site_a(), 0);
    /* a new session starts over at 1 and defines again */
    fake_reset();
    assert_int_equal(gpufl__stack_init(&fake_host, 10), 0);
    assert_int_equal(site_b(), 1);
    assert_int_equal(fake.n, 1);
}

/* ---- the NDJSON line ------------------------------------------------------------ */

static const char *fake_lookup(const void *ctx, uint32_t id, uint32_t *len)
{
    (void)ctx;
    const char *str = fake_string(id);
    if (!str)
        str = "";
    *len = (uint32_t)strlen(str);
    return str;
}

static void test_ndjson_stack_line(void **state)
{
    (void)state;
    const gpufl__string_lookup names = {fake_lookup, NULL};
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_STACK;
    ev.h.ts = 123;
    ev.h.tid = 7;
    ev.u.stack = (gfl_stack_payload){.id = 5, .first = 12, .total = 14, .count = 2, .truncated = 1};
    ev.u.stack.frames[0] = (gfl_stack_frame){fake_intern("/opt/a \"b\".so", 13), 0x1a2b};
    ev.u.stack.frames[1] = (gfl_stack_frame){0, 0x7f3a1c20}; /* JIT code: no module */
    size_t bound = gpufl__ndjson_bound(&ev, &names);
    char *buf = malloc(bound);
    assert_non_null(buf);
    size_t len = gpufl__ndjson_format(&ev, &names, buf);
    assert_true(len <= bound);
    assert_int_equal(buf[len - 1], '\n');
    json_error_t err;
    json_t *j = json_loadb(buf, len, 0, &err);
    assert_non_null(j);
    assert_string_equal(tu_str(j, "type"), "stack");
    assert_int_equal(tu_int(j, "ts_ns"), 123);
    assert_int_equal(tu_int(j, "tid"), 7);
    assert_int_equal(tu_int(j, "id"), 5);
    assert_int_equal(tu_int(j, "first"), 12);
    assert_int_equal(tu_int(j, "total"), 14);
    assert_true(json_is_true(json_object_get(j, "truncated")));
    json_t *frames = json_object_get(j, "frames");
    assert_int_equal(json_array_size(frames), 2);
    assert_string_equal(json_string_value(json_array_get(json_array_get(frames, 0), 0)), "/opt/a \"b\".so");
    assert_string_equal(json_string_value(json_array_get(json_array_get(frames, 0), 1)), "0x1a2b");
    assert_true(json_is_null(json_array_get(json_array_get(frames, 1), 0)));
    assert_string_equal(json_string_value(json_array_get(json_array_get(frames, 1), 1)), "0x7f3a1c20");
    json_decref(j);

    /* a count past the piece's room is not trusted; no truncated key when 0 */
    ev.u.stack.count = 200;
    ev.u.stack.truncated = 0;
    free(buf);
    bound = gpufl__ndjson_bound(&ev, &names);
    buf = malloc(bound);
    assert_non_null(buf);
    len = gpufl__ndjson_format(&ev, &names, buf);
    assert_true(len <= bound);
    j = json_loadb(buf, len, 0, &err);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "frames")), GFL_STACK_FRAMES_PER_EVENT);
    assert_null(json_object_get(j, "truncated"));
    json_decref(j);
    free(buf);
}

/* ---- 8 threads --------------------------------------------------------------------- */

#define N_THREADS 8
#define ROUNDS 200
static const site_fn thread_sites[] = {site_a, site_b, site_c, site_d, site_e, deep_20, deep_40};
#define N_SITES (sizeof thread_sites / sizeof thread_sites[0])
static pthread_barrier_t start_line;

static void *worker(void *arg)
{
    uint32_t *ids = arg;
    uint32_t got[ROUNDS][N_SITES];
    pthread_barrier_wait(&start_line); /* all meet the new stacks at once */
    for (int r = 0; r < ROUNDS; r++)   /* no branch on r: see the first test */
        for (size_t s = 0; s < N_SITES; s++)
            got[r][s] = thread_sites[s]();
    for (size_t s = 0; s < N_SITES; s++) {
        ids[s] = got[0][s];
        for (int r = 1; r < ROUNDS; r++)
            if (got[r][s] != ids[s])
                ids[s] = UINT32_MAX;
    }
    return NULL;
}

static void test_threads_agree(void **state)
{
    (void)state;
    pthread_t t[N_THREADS];
    static uint32_t ids[N_THREADS][N_SITES];
    assert_int_equal(pthread_barrier_init(&start_line, NULL, N_THREADS), 0);
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, ids[i]), 0);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start_line);
    for (size_t s = 0; s < N_SITES; s++) {
        assert_true(ids[0][s] != 0 && ids[0][s] != UINT32_MAX);
        for (int i = 1; i < N_THREADS; i++)
            assert_int_equal(ids[i][s], ids[0][s]);
        for (size_t o = 0; o < s; o++)
            assert_true(ids[0][o] != ids[0][s]);
        assembled a;
        assemble(ids[0][s], &a); /* each piece once: one definer */
        assert_int_equal(a.pieces, (a.total + 11) / 12);
    }
    gfl_stack_stats st;
    gpufl__stack_stats_get(&st);
    assert_int_equal(st.captures, (uint64_t)N_THREADS * ROUNDS * N_SITES);
    assert_int_equal(st.unique, N_SITES);
    assert_int_equal(st.defined, N_SITES);
    assert_int_equal(st.failures, 0);
}

/* ---- through a real session -------------------------------------------------------- */

static __attribute__((noinline)) uint32_t launch_site(const gpufl_plugin_host *h, int depth)
{
    uint32_t id = depth ? recurse(depth) : site_b();
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_KERNEL;
    ev.h.ts = h->now_ns();
    ev.u.kernel.end_ts = ev.h.ts + 1000;
    ev.u.kernel.name = h->intern("stacked_kernel", 14);
    ev.u.kernel.stack_id = id;
    assert_int_equal(h->push(&ev), 0);
    return id;
}

static void test_real_session(void **state)
{
    (void)state;
    gpufl__stack_shutdown(); /* the fake host's session */
    char *log_path = tu_mkdtemp("stacks");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = "stacks";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_STACKTEST_PLUGIN;
    assert_true(gpufl_init(&o));
    void *lib = dlopen(GFL_STACKTEST_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    const gpufl_plugin_host *(*get_host)(void);
    void *sym = dlsym(lib, "stacktest_host");
    assert_non_null(sym);
    memcpy(&get_host, &sym, sizeof sym);
    const gpufl_plugin_host *h = get_host();
    assert_non_null(h);
    assert_int_equal(gpufl__stack_init(h, 1024), 0);

    /* one call site, with no branch on i (see the first test); the second
     * time 30 frames deeper */
    static const int depth[6] = {0, 30, 0, 0, 0, 0};
    uint32_t got[6];
    for (int i = 0; i < n_steps + 1; i++)
        got[i] = launch_site(h, depth[i]);
    uint32_t b = got[0], deep = got[1];
    for (int i = 2; i < n_steps + 1; i++)
        assert_int_equal(got[i], b);
    assert_true(b && deep && b != deep);
    gpufl__stack_shutdown();
    gpufl_shutdown();
    dlclose(lib);

    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    tu_ndjson dev;
    assert_int_equal(tu_ndjson_load_channel(dir, "device", &dev), 0);
    size_t n = tu_count_type(&dev, "stack");
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(len > 0);
    exe[len] = '\0';
    for (size_t i = 0; i < n; i++) {
        json_t *l = tu_nth_type(&dev, "stack", i);
        assert_true(tu_int(l, "id") == b || tu_int(l, "id") == deep);
        json_t *frames = json_object_get(l, "frames");
        assert_true(json_array_size(frames) >= 1);
        json_t *f0 = json_array_get(frames, 0);
        assert_string_equal(json_string_value(json_array_get(f0, 0)), exe);
        assert_true(!strncmp(json_string_value(json_array_get(f0, 1)), "0x", 2));
    }
    tu_ndjson_free(&dev);

    /* the session says which machine recorded it, so that the CLI below
     * trusts this machine's module files for it */
    char id[GPUFL__MACHINE_ID_MAX];
    json_t *root = tu_session_json(dir);
    const char *recorded = json_string_value(json_object_get(json_object_get(root, "host_info"), "machine_id"));
    if (gpufl__machine_id(id) == 0)
        assert_string_equal(recorded, id);
    else
        assert_null(recorded); /* left out, never made up */
    json_decref(root);

    /* read back as the CLI does */
    gpufl__stack_table t;
    char err[512];
    assert_int_equal(gpufl__stack_table_load(dir, &t, err, sizeof err), 0);
    assert_int_equal(t.n, 2);
    const gpufl__stack_rec *rb = gpufl__stack_table_find(&t, b);
    const gpufl__stack_rec *rd = gpufl__stack_table_find(&t, deep);
    assert_non_null(rb);
    assert_non_null(rd);
    assert_int_equal(rb->uses, 5);
    assert_int_equal(rd->uses, 1);
    assert_int_equal(rb->missing, 0);
    assert_int_equal(rd->missing, 0);
    assert_true(rd->total > 30);
    assert_int_equal(n, 1 + (rd->total + 11) / 12); /* every piece once */
    gpufl__stack_table_free(&t);

#ifdef GFL_CLI
    if (gpufl__symbolizer_available()) {
        /* a machine without an id cannot tell its own sessions: it is told */
        const char *args[] = {dir, id[0] ? NULL : "--symbolize-here", NULL};
        char *out = NULL, *errors = NULL;
        int rc = tu_run_subcommand(GFL_CLI, "stacks", args, &out, &errors);
        if (rc != 0)
            fail_msg("gpufl stacks exited %d: %s", rc, errors);
        assert_non_null(strstr(out, "site_b at "));
        assert_non_null(strstr(out, "launch_site at "));
        assert_non_null(strstr(out, "recurse at "));
        assert_non_null(strstr(out, "test_stack_capture.c:"));
        assert_non_null(strstr(out, "5 uses"));
        free(out);
        free(errors);
    }
#endif
    tu_rm_rf(log_path);
    free(log_path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sites_get_distinct_stable_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_stacks_split_and_truncate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_internal_frames_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_ring_defines_later, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_table_returns_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off_outside_a_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ndjson_stack_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_session, setup, teardown),
    };
    setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
