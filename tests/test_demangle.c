/*
 * Kernel name demangling and its cache (src/backend/cupti/demangle.h).
 *
 * This test is C and links no C++ runtime, like the CUPTI plugin, so the
 * demangler is found the way the plugin finds it when the program has none
 * in its global scope: by loading libstdc++.so.6. Checked: real kernel
 * names (expected text from c++filt), names left alone (not mangled, or
 * mangled wrongly), output cut to the caller's buffer, and the cache: one
 * intern() call per name per session, ids 0 and 1 never stored, its bound,
 * and growth keeping every entry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/demangle.h"
#include "core/intern.h"
#include "gpufl/gpufl.h"

static const struct {
    const char *mangled, *readable;
} known[] = {
    {"_Z5emptyv", "empty()"},
    {"_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfLi128EEEEEvNT_6ParamsE",
     "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float, 128> >"
     "(cutlass::gemm::kernel::Gemm<float, 128>::Params)"},
    {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorEEEviT0_",
     "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor>"
     "(int, at::native::FillFunctor)"},
};

static void test_known_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char buf[512];
        size_t full = 0;
        assert_int_equal(gpufl__demangle(known[i].mangled, buf, sizeof buf, &full), 1);
        assert_string_equal(buf, known[i].readable);
        assert_int_equal(full, strlen(known[i].readable));
    }
}

static void test_names_left_alone(void **state)
{
    (void)state;
    /* extern "C" kernels, cuBLAS's names, "_Z" that does not parse, bare
     * "_Z", and the empty name come back as they are. */
    static const char *const plain[] = {"ampere_sgemm_128x64_nn", "_Zfoo", "_Z", "", "Z5emptyv", "__Z5emptyv"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        char buf[64];
        size_t full = 999;
        assert_int_equal(gpufl__demangle(plain[i], buf, sizeof buf, &full), 0);
        assert_string_equal(buf, plain[i]);
        assert_int_equal(full, strlen(plain[i]));
    }
    /* The buffer may be the name itself. */
    char same[32] = "not_mangled";
    assert_int_equal(gpufl__demangle(same, same, sizeof same, NULL), 0);
    assert_string_equal(same, "not_mangled");
}

static void test_small_buffer_cuts(void **state)
{
    (void)state;
    char buf[8];
    size_t full = 0;
    memset(buf, 'x', sizeof buf);
    /* "empty()" is 7 bytes: 4 bytes hold "emp" and the NUL. */
    assert_int_equal(gpufl__demangle("_Z5emptyv", buf, 4, &full), 1);
    assert_string_equal(buf, "emp");
    assert_int_equal(full, 7);
    assert_int_equal(buf[4], 'x'); /* nothing written past len */
    /* Exactly enough. */
    assert_int_equal(gpufl__demangle("_Z5emptyv", buf, 8, &full), 1);
    assert_string_equal(buf, "empty()");
    /* One byte: only the NUL. */
    assert_int_equal(gpufl__demangle("_Z5emptyv", buf, 1, &full), 1);
    assert_string_equal(buf, "");
    assert_int_equal(full, 7);
    /* Names left alone are cut the same way. */
    assert_int_equal(gpufl__demangle("abcdef", buf, 3, &full), 0);
    assert_string_equal(buf, "ab");
    assert_int_equal(full, 6);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    char buf[16] = "untouched";
    assert_int_equal(gpufl__demangle(NULL, buf, sizeof buf, NULL), GPUFL_EINVAL);
    assert_int_equal(gpufl__demangle("_Z5emptyv", NULL, sizeof buf, NULL), GPUFL_EINVAL);
    assert_int_equal(gpufl__demangle("_Z5emptyv", buf, 0, NULL), GPUFL_EINVAL);
    assert_string_equal(buf, "untouched");
}

/* ---- the cache, over a fake intern table that counts its calls ---------- */

#define FAKE_MAX 8192
static char *fake_strings[FAKE_MAX];
static uint32_t fake_count;
static unsigned intern_calls;
static uint32_t fake_overflow_after = UINT32_MAX; /* give id 1 once this many exist */

/* Ids from 2, as the core hands them out (0 and 1 are reserved). */
static uint32_t fake_intern(const char *s, size_t n)
{
    intern_calls++;
    for (uint32_t i = 0; i < fake_count; i++)
        if (strlen(fake_strings[i]) == n && memcmp(fake_strings[i], s, n) == 0)
            return i + 2;
    if (fake_count >= fake_overflow_after || fake_count == FAKE_MAX)
        return GFL_INTERN_OVERFLOW;
    fake_strings[fake_count] = strndup(s, n);
    assert_non_null(fake_strings[fake_count]);
    return 2 + fake_count++;
}

static const char *fake_str(uint32_t id) { return id >= 2 && id - 2 < fake_count ? fake_strings[id - 2] : ""; }

static int reset_fake(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < fake_count; i++)
        free(fake_strings[i]);
    fake_count = 0;
    intern_calls = 0;
    fake_overflow_after = UINT32_MAX;
    return 0;
}

/* What the plugin does per kernel record: intern the name, then ask. */
static uint32_t lookup(gfl_name_cache *c, const char *name)
{
    uint32_t id = fake_intern(name, strlen(name));
    intern_calls--; /* count only the cache's own calls */
    return gpufl__name_cache_demangled(c, id, name);
}

static void test_cache_demangles_once(void **state)
{
    (void)state;
    gfl_name_cache c;
    gpufl__name_cache_init(&c, fake_intern, 0);
    assert_int_equal(c.max_entries, GFL_NAME_CACHE_MAX_ENTRIES);

    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        unsigned before = intern_calls;
        uint32_t id = lookup(&c, known[i].mangled);
        assert_string_equal(fake_str(id), known[i].readable);
        assert_int_equal(intern_calls, before + 1); /* a miss interns the demangled form */
        for (int again = 0; again < 3; again++) {
            assert_int_equal(lookup(&c, known[i].mangled), id);
            assert_int_equal(intern_calls, before + 1); /* hits intern nothing */
        }
    }
    assert_int_equal(c.misses, 3);
    assert_int_equal(c.hits, 9);
    assert_int_equal(c.n_entries, 3);

    /* A name that is not mangled is its own demangled form, interned by
     * nobody but the caller, and not stored. */
    uint32_t plain = fake_intern("ampere_sgemm_128x64_nn", 22);
    unsigned before = intern_calls;
    assert_int_equal(gpufl__name_cache_demangled(&c, plain, "ampere_sgemm_128x64_nn"), plain);
    assert_int_equal(intern_calls, before);
    assert_int_equal(c.n_entries, 3);

    /* A mangled name that does not demangle keeps its id, and is stored so
     * that the demangler is not asked again. */
    uint32_t bad = lookup(&c, "_Zfoo");
    assert_string_equal(fake_str(bad), "_Zfoo");
    assert_int_equal(c.n_entries, 4);
    assert_int_equal(lookup(&c, "_Zfoo"), bad);
    assert_int_equal(c.hits, 10);

    gpufl__name_cache_free(&c);
    assert_int_equal(c.n_entries, 0);
    /* Usable again after free: a fresh miss. */
    assert_string_equal(fake_str(lookup(&c, "_Z5emptyv")), "empty()");
    assert_int_equal(c.misses, 1);
    gpufl__name_cache_free(&c);
}

static void test_cache_never_stores_reserved_ids(void **state)
{
    (void)state;
    gfl_name_cache c;
    gpufl__name_cache_init(&c, fake_intern, 0);
    /* Id 1 is shared by every name the core's table had no room for: storing
     * it would give them all the first one's demangled name. */
    uint32_t readable = 0;
    for (int i = 0; i < 3; i++) {
        unsigned before = intern_calls;
        readable = gpufl__name_cache_demangled(&c, GFL_INTERN_OVERFLOW, "_Z5emptyv");
        assert_string_equal(fake_str(readable), "empty()");
        assert_int_equal(intern_calls, before + 1);
    }
    assert_int_equal(gpufl__name_cache_demangled(&c, GFL_INTERN_EMPTY, "_Z5emptyv"), readable);
    assert_int_equal(c.n_entries, 0);
    assert_int_equal(c.uncached, 4);
    assert_int_equal(c.hits, 0);
    gpufl__name_cache_free(&c);
}

static void test_cache_keeps_mangled_id_when_intern_overflows(void **state)
{
    (void)state;
    gfl_name_cache c;
    gpufl__name_cache_init(&c, fake_intern, 0);
    uint32_t id = fake_intern("_Z5emptyv", 9);
    fake_overflow_after = fake_count; /* no room for "empty()" */
    assert_int_equal(gpufl__name_cache_demangled(&c, id, "_Z5emptyv"), id);
    gpufl__name_cache_free(&c);
}

static void test_cache_bound(void **state)
{
    (void)state;
    gfl_name_cache c;
    gpufl__name_cache_init(&c, fake_intern, 4);
    char name[32], want[32];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "_Z1fILi%dEEvv", i);
        snprintf(want, sizeof want, "void f<%d>()", i);
        assert_string_equal(fake_str(lookup(&c, name)), want);
    }
    assert_int_equal(c.n_entries, 4);
    assert_int_equal(c.uncached, 2);
    /* Past the bound names are still answered right, demangled each time. */
    unsigned before = intern_calls;
    assert_string_equal(fake_str(lookup(&c, "_Z1fILi5EEvv")), "void f<5>()");
    assert_int_equal(intern_calls, before + 1);
    /* Stored ones are hits. */
    before = intern_calls;
    assert_string_equal(fake_str(lookup(&c, "_Z1fILi0EEvv")), "void f<0>()");
    assert_int_equal(intern_calls, before);
    gpufl__name_cache_free(&c);
}

static void test_cache_growth_keeps_entries(void **state)
{
    (void)state;
    gfl_name_cache c;
    gpufl__name_cache_init(&c, fake_intern, 0);
    enum { N = 3000 }; /* the table starts at 1024 slots and doubles twice */
    uint32_t ids[N];
    char name[32], want[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "_Z1fILi%dEEvv", i);
        ids[i] = lookup(&c, name);
    }
    assert_int_equal(c.n_entries, N);
    assert_true(c.n_slots >= 2 * N);
    unsigned before = intern_calls;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "_Z1fILi%dEEvv", i);
        snprintf(want, sizeof want, "void f<%d>()", i);
        uint32_t id = lookup(&c, name);
        assert_int_equal(id, ids[i]);
        assert_string_equal(fake_str(id), want);
    }
    assert_int_equal(intern_calls, before);
    assert_int_equal(c.hits, N);
    gpufl__name_cache_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_names),
        cmocka_unit_test(test_names_left_alone),
        cmocka_unit_test(test_small_buffer_cuts),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test_teardown(test_cache_demangles_once, reset_fake),
        cmocka_unit_test_teardown(test_cache_never_stores_reserved_ids, reset_fake),
        cmocka_unit_test_teardown(test_cache_keeps_mangled_id_when_intern_overflows, reset_fake),
        cmocka_unit_test_teardown(test_cache_bound, reset_fake),
        cmocka_unit_test_teardown(test_cache_growth_keeps_entries, reset_fake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
