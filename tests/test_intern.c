/*
 * String interning (src/core/intern.h).
 *
 * Events carry 32-bit name ids and the writers turn them back into text, so
 * an id that changes, is shared by two strings, or reads back wrong renames
 * kernels and scopes in every trace. Checked here: the id contract (same
 * string, same id; reserved ids 0 and 1), byte-exact round trips including
 * embedded NULs and the length cut, stability while the table grows through
 * 100k strings, consistency under 8 racing threads, and the overflow id once
 * the table is full (in forked children, since that state is process-wide
 * and permanent).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/intern.h"
#include "test_util.h"

static void assert_reads_back(uint32_t id, const char *s, size_t n)
{
    uint32_t len = 0xffffffffu;
    const char *got = gpufl__intern_str(id, &len);
    assert_non_null(got);
    if (len != n || memcmp(got, s, n) != 0)
        fail_msg("id %u reads back %u bytes, expected %zu", id, len, n);
    assert_int_equal(got[n], '\0'); /* always NUL-terminated */
}

static void test_same_string_same_id(void **state)
{
    (void)state;
    /* the table starts on first use with its two reserved ids (when this
     * test runs first, as it does unfiltered) */
    if (gpufl__intern_count() == 0) {
        assert_int_equal(gpufl__intern("first name"), 2);
        assert_int_equal(gpufl__intern_count(), 3);
    }
    uint32_t before = gpufl__intern_count();
    uint32_t a = gpufl__intern("train_step");
    assert_true(a > GFL_INTERN_OVERFLOW);
    assert_int_equal(gpufl__intern_count(), before + 1);
    /* from a different buffer, by length, and repeatedly: same id, no insert */
    char copy[] = "train_step";
    assert_int_equal(gpufl__intern(copy), a);
    assert_int_equal(gpufl__intern_n("train_step_and_more", 10), a);
    for (int i = 0; i < 100; i++)
        assert_int_equal(gpufl__intern("train_step"), a);
    assert_int_equal(gpufl__intern_count(), before + 1);
    assert_reads_back(a, "train_step", 10);

    /* different strings, including prefixes and one-byte differences around
     * the 8-byte words the hash folds, get different ids */
    static const char *const others[] = {
        "train_ste", "train_stepx", "Train_step",       "train_stop",       "a", "b", "ab", "ba", "12345678",
        "12345679",  "123456789",   "1234567890123456", "1234567890123457",
    };
    uint32_t ids[sizeof others / sizeof others[0]];
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        ids[i] = gpufl__intern(others[i]);
        assert_true(ids[i] > GFL_INTERN_OVERFLOW);
        assert_int_not_equal(ids[i], a);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(ids[i], ids[j]);
        assert_reads_back(ids[i], others[i], strlen(others[i]));
    }
    assert_int_equal(gpufl__intern_count(), before + 1 + sizeof others / sizeof others[0]);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        assert_int_equal(gpufl__intern(others[i]), ids[i]);
}

static void test_reserved_ids(void **state)
{
    (void)state;
    assert_int_equal(GFL_INTERN_EMPTY, 0);
    assert_int_equal(GFL_INTERN_OVERFLOW, 1);
    assert_int_equal(gpufl__intern(""), GFL_INTERN_EMPTY);
    assert_int_equal(gpufl__intern(NULL), GFL_INTERN_EMPTY);
    assert_int_equal(gpufl__intern_n(NULL, 10), GFL_INTERN_EMPTY);
    assert_int_equal(gpufl__intern_n("abc", 0), GFL_INTERN_EMPTY);
    assert_reads_back(GFL_INTERN_EMPTY, "", 0);

    /* id 1 is reserved: no ordinary name ever gets it, and it reads back as
     * a non-empty placeholder */
    (void)gpufl__intern("make sure the table exists");
    assert_true(gpufl__intern_count() >= 3);
    uint32_t len = 0;
    const char *ov = gpufl__intern_str(GFL_INTERN_OVERFLOW, &len);
    assert_true(len > 0);
    assert_int_equal(strlen(ov), len);
    /* interning the placeholder's own text gives a fresh id, not 1 */
    uint32_t same_text = gpufl__intern(ov);
    assert_true(same_text > GFL_INTERN_OVERFLOW);
    assert_int_equal(gpufl__intern_overflows(), 0);

    /* unknown ids read as "" (len 0), including ones past the directory */
    uint32_t unknown[] = {gpufl__intern_count(), gpufl__intern_count() + 4096, GFL_INTERN_MAX_STRINGS - 1,
                          GFL_INTERN_MAX_STRINGS, UINT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        len = 77;
        const char *s = gpufl__intern_str(unknown[i], &len);
        assert_non_null(s);
        assert_string_equal(s, "");
        assert_int_equal(len, 0);
    }
    /* len is optional */
    assert_string_equal(gpufl__intern_str(same_text, NULL), ov);
}

static void test_embedded_bytes_round_trip(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
    } cases[] = {
        {"a\0b", 3},
        {"a\0c", 3},
        {"a\0", 2},
        {"\0", 1},
        {"\0\0", 2},
        {"a", 1}, /* differs from "a\0" only by length */
        {"\xff\xfe\x01\x7f", 4},
        {"x\0\0\0\0\0\0\0y", 9},
        {"x\0\0\0\0\0\0\0z", 9},
        {"\n\t\"\\", 4},
    };
    uint32_t ids[sizeof cases / sizeof cases[0]];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ids[i] = gpufl__intern_n(cases[i].s, cases[i].n);
        assert_true(ids[i] > GFL_INTERN_OVERFLOW);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(ids[i], ids[j]);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(gpufl__intern_n(cases[i].s, cases[i].n), ids[i]);
        assert_reads_back(ids[i], cases[i].s, cases[i].n);
    }
    /* gpufl__intern stops at the first NUL */
    assert_int_equal(gpufl__intern("a\0b"), gpufl__intern_n("a", 1));
}

static void test_long_names_are_cut(void **state)
{
    (void)state;
    const size_t max = GFL_INTERN_MAX_LEN;
    char *a = malloc(max + 1000);
    char *b = malloc(max + 1000);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < max + 1000; i++)
        a[i] = (char)('a' + i % 26);
    memcpy(b, a, max + 1000);

    uint32_t full = gpufl__intern_n(a, max); /* exactly at the limit: kept whole */
    assert_true(full > GFL_INTERN_OVERFLOW);
    assert_reads_back(full, a, max);

    /* longer: cut to the first GFL_INTERN_MAX_LEN bytes, so the same id */
    assert_int_equal(gpufl__intern_n(a, max + 1), full);
    assert_int_equal(gpufl__intern_n(a, max + 999), full);
    b[max + 500] = '#'; /* differs only past the cut */
    assert_int_equal(gpufl__intern_n(b, max + 999), full);
    b[max + 999] = '\0';
    assert_int_equal(gpufl__intern(b), full);

    /* a difference inside the limit still counts */
    b[max - 1] = '#';
    uint32_t other = gpufl__intern_n(b, max + 10);
    assert_true(other > GFL_INTERN_OVERFLOW);
    assert_int_not_equal(other, full);
    assert_reads_back(other, b, max);
    assert_int_not_equal(gpufl__intern_n(a, max - 1), full);
    free(a);
    free(b);
}

#define MANY 100000u

static void many_name(char *buf, size_t cap, unsigned i)
{
    /* varying lengths (1..40 bytes after the prefix) so words and tails vary */
    snprintf(buf, cap, "grow/%u/%.*s", i, (int)(i % 40), "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH");
}

static void test_growth_keeps_ids_stable(void **state)
{
    (void)state;
    uint32_t *ids = malloc(MANY * sizeof *ids);
    assert_non_null(ids);
    char name[128];
    uint32_t before = gpufl__intern_count();
    for (unsigned i = 0; i < MANY; i++) {
        many_name(name, sizeof name, i);
        ids[i] = gpufl__intern(name);
        if (ids[i] <= GFL_INTERN_OVERFLOW)
            fail_msg("string %u got reserved id %u", i, ids[i]);
        /* spot-check early ids after every few table doublings */
        if ((i & (i - 1)) == 0) {
            for (unsigned j = 0; j <= i; j += 1 + i / 64) {
                many_name(name, sizeof name, j);
                assert_int_equal(gpufl__intern(name), ids[j]);
            }
        }
    }
    /* ids are handed out densely, in insertion order */
    assert_int_equal(gpufl__intern_count(), before + MANY);
    for (unsigned i = 0; i < MANY; i++)
        assert_int_equal(ids[i], before + i);
    for (unsigned i = 0; i < MANY; i++) {
        many_name(name, sizeof name, i);
        if (gpufl__intern(name) != ids[i])
            fail_msg("string %u changed id from %u to %u", i, ids[i], gpufl__intern(name));
        assert_reads_back(ids[i], name, strlen(name));
    }
    assert_int_equal(gpufl__intern_count(), before + MANY);
    assert_int_equal(gpufl__intern_overflows(), 0);
    free(ids);
}

/* ---- 8 threads -------------------------------------------------------- */

#define THREADS 8
#define PER_THREAD 6000u
#define STRIDE 2000u /* thread t interns [t*STRIDE, t*STRIDE + PER_THREAD): overlapping */
#define SPAN (STRIDE * (THREADS - 1) + PER_THREAD)
#define ROUNDS 3

typedef struct worker {
    unsigned index;
    pthread_barrier_t *start;
    uint32_t ids[SPAN]; /* 0 where this thread did not intern the string */
    unsigned mismatches;
} worker;

static void conc_name(char *buf, size_t cap, unsigned i)
{
    snprintf(buf, cap, "conc-%u-%s", i, i % 3 ? "kernel" : "a_longer_scope_name_for_variety");
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    char name[96];
    unsigned base = w->index * STRIDE;
    pthread_barrier_wait(w->start);
    for (unsigned round = 0; round < ROUNDS; round++) {
        for (unsigned k = 0; k < PER_THREAD; k++) {
            /* odd threads walk backwards, so pairs race on the same inserts
             * from both ends */
            unsigned i = base + (w->index & 1 ? PER_THREAD - 1 - k : k);
            conc_name(name, sizeof name, i);
            uint32_t id = gpufl__intern(name);
            if (round == 0)
                w->ids[i] = id;
            else if (w->ids[i] != id)
                w->mismatches++; /* the same thread saw two ids */
            /* reading back through the directory while others insert */
            uint32_t len;
            const char *s = gpufl__intern_str(id, &len);
            if (len != strlen(name) || memcmp(s, name, len) != 0)
                w->mismatches++;
        }
    }
    return NULL;
}

static void test_concurrent_interning_is_consistent(void **state)
{
    (void)state;
    uint32_t before = gpufl__intern_count();
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    worker *w = calloc(THREADS, sizeof *w);
    assert_non_null(w);
    pthread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        w[t].index = t;
        w[t].start = &start;
        assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    for (unsigned t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&start);

    /* one id per string across all threads */
    uint32_t *id_of = calloc(SPAN, sizeof *id_of);
    assert_non_null(id_of);
    for (unsigned t = 0; t < THREADS; t++) {
        assert_int_equal(w[t].mismatches, 0);
        for (unsigned i = 0; i < SPAN; i++) {
            uint32_t id = w[t].ids[i];
            if (!id)
                continue;
            assert_true(id > GFL_INTERN_OVERFLOW);
            if (!id_of[i])
                id_of[i] = id;
            else if (id_of[i] != id)
                fail_msg("string %u: thread %u got id %u, another thread %u", i, t, id, id_of[i]);
        }
    }
    /* every string was interned by someone, and distinct strings have
     * distinct ids: exactly SPAN new ids, all different */
    assert_int_equal(gpufl__intern_count(), before + SPAN);
    char *seen = calloc(SPAN, 1);
    assert_non_null(seen);
    char name[96];
    for (unsigned i = 0; i < SPAN; i++) {
        assert_true(id_of[i] >= before && id_of[i] < before + SPAN);
        assert_int_equal(seen[id_of[i] - before], 0);
        seen[id_of[i] - before] = 1;
        conc_name(name, sizeof name, i);
        assert_int_equal(gpufl__intern(name), id_of[i]);
    }
    free(seen);
    free(id_of);
    free(w);
}

/* ---- overflow, in children --------------------------------------------- */

/* Child side: returns 0 when the overflow behaves, else a line number. */
static int overflow_by_bytes_child(void)
{
    uint32_t keep = gpufl__intern("kept-before-overflow");
    if (keep <= GFL_INTERN_OVERFLOW)
        return __LINE__;
    size_t len = GFL_INTERN_MAX_LEN;
    char *s = malloc(len);
    if (!s)
        return __LINE__;
    memset(s, 'x', len);
    uint32_t last = 0;
    unsigned inserted = 0;
    for (unsigned i = 0;; i++) {
        snprintf(s, 32, "big-%u-", i);
        s[strlen(s)] = 'x';
        uint32_t id = gpufl__intern_n(s, len);
        if (id == GFL_INTERN_OVERFLOW)
            break;
        if (id <= last) /* new ids only ever grow */
            return __LINE__;
        last = id;
        inserted++;
        if (inserted > (GFL_INTERN_MAX_BYTES / len) + 1)
            return __LINE__; /* the byte cap did not stop it */
    }
    if (gpufl__intern_overflows() != 1)
        return __LINE__;
    uint32_t count = gpufl__intern_count();
    /* full: new big names overflow (and are counted), old ones keep their
     * ids and text */
    memcpy(s, "another-new-name", 16);
    if (gpufl__intern_n(s, len) != GFL_INTERN_OVERFLOW || gpufl__intern_overflows() != 2)
        return __LINE__;
    if (gpufl__intern_count() != count)
        return __LINE__;
    if (gpufl__intern("kept-before-overflow") != keep)
        return __LINE__;
    uint32_t n;
    const char *txt = gpufl__intern_str(keep, &n);
    if (n != strlen("kept-before-overflow") || strcmp(txt, "kept-before-overflow") != 0)
        return __LINE__;
    txt = gpufl__intern_str(last, &n);
    if (n != len)
        return __LINE__;
    txt = gpufl__intern_str(GFL_INTERN_OVERFLOW, &n);
    if (n == 0)
        return __LINE__;
    free(s);
    return 0;
}

static int overflow_by_count_child(void)
{
    char name[32];
    uint32_t first = gpufl__intern("count-0");
    for (unsigned i = 1;; i++) {
        snprintf(name, sizeof name, "count-%u", i);
        uint32_t id = gpufl__intern(name);
        if (id == GFL_INTERN_OVERFLOW)
            break;
        if (id != first + i)
            return __LINE__;
        if (i > GFL_INTERN_MAX_STRINGS)
            return __LINE__;
    }
    if (gpufl__intern_count() != GFL_INTERN_MAX_STRINGS)
        return __LINE__;
    if (gpufl__intern("yet another") != GFL_INTERN_OVERFLOW)
        return __LINE__;
    if (gpufl__intern("count-0") != first)
        return __LINE__;
    /* the last id handed out is the table's last, and reads back */
    snprintf(name, sizeof name, "count-%u", GFL_INTERN_MAX_STRINGS - 1 - first);
    if (gpufl__intern(name) != GFL_INTERN_MAX_STRINGS - 1)
        return __LINE__;
    uint32_t n;
    const char *txt = gpufl__intern_str(GFL_INTERN_MAX_STRINGS - 1, &n);
    if (n != strlen(name) || strcmp(txt, name) != 0)
        return __LINE__;
    return 0;
}

static void test_overflow_when_bytes_run_out(void **state)
{
    (void)state;
    tu_expect_child_ok(overflow_by_bytes_child, __FILE__);
    /* the parent's table is untouched */
    assert_int_equal(gpufl__intern_overflows(), 0);
}

static void test_overflow_when_count_runs_out(void **state)
{
    (void)state;
    tu_expect_child_ok(overflow_by_count_child, __FILE__);
    assert_int_equal(gpufl__intern_overflows(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_string_same_id),         cmocka_unit_test(test_reserved_ids),
        cmocka_unit_test(test_embedded_bytes_round_trip),   cmocka_unit_test(test_long_names_are_cut),
        cmocka_unit_test(test_growth_keeps_ids_stable),     cmocka_unit_test(test_concurrent_interning_is_consistent),
        cmocka_unit_test(test_overflow_when_bytes_run_out), cmocka_unit_test(test_overflow_when_count_runs_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
