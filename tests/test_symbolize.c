/*
 * Symbolization of recorded frames (src/read/symbolize.h).
 *
 * A wrong name or line sends a user to the wrong code, and a crash or an
 * empty line on a missing file makes the stacks unreadable exactly when a
 * session was copied to another machine. Checked: functions of this binary
 * (built with -g) by name and file:line, a return address resolved to the
 * line of its call, libc's exported functions by name, C++ names demangled
 * (libstdc++), and the fallbacks: a missing module, no module, a stripped
 * copy of this binary, a build without libdw.
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
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "read/symbolize.h"
#include "test_util.h"

static char exe[4096];

/* Module path and ELF offset of a code address, as the recorder writes them. */
static const char *module_of(uintptr_t addr, uint64_t *offset)
{
    Dl_info info;
    struct link_map *lm = NULL;
    assert_true(dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP));
    assert_non_null(lm);
    *offset = addr - lm->l_addr;
    return lm->l_name && lm->l_name[0] ? lm->l_name : exe;
}

static const int known_line = __LINE__ + 1;
static __attribute__((noinline)) int known_function(int x) { return x * 3 + 1; }

static void *volatile last_return;
static int call_line;
static __attribute__((noinline)) void note_return(void) { last_return = __builtin_return_address(0); }
static __attribute__((noinline)) void caller(void)
{
    call_line = __LINE__ + 1;
    note_return();
    __asm__ volatile("" ::: "memory"); /* no tail call */
}

static int skip_without_libdw(void **state)
{
    (void)state;
    if (!gpufl__symbolizer_available())
        skip();
    return 0;
}

static void test_own_function_with_line(void **state)
{
    (void)state;
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    assert_non_null(s);
    uint64_t off;
    const char *mod = module_of((uintptr_t)known_function, &off);
    gpufl__symbol sym;
    assert_int_equal(gpufl__symbolize(s, mod, off, &sym), 0);
    assert_int_equal(sym.status, GFL_SYM_OK);
    assert_string_equal(sym.function, "known_function");
    assert_int_equal(sym.function_offset, 0);
    assert_non_null(strstr(sym.file, "test_symbolize.c"));
    /* the signature, or (optimised) the first line of the body */
    assert_true(sym.line >= (uint32_t)known_line && sym.line <= (uint32_t)known_line + 2);
    assert_true(sym.file[0] == '/');
    /* inside the function: same name, offset from its start */
    assert_int_equal(gpufl__symbolize(s, mod, off + 1, &sym), 0);
    assert_string_equal(sym.function, "known_function");
    assert_int_equal(sym.function_offset, 1);
    assert_int_equal(known_function(1), 4);
    gpufl__symbolizer_free(s);
}

static void test_return_address_gives_call_line(void **state)
{
    (void)state;
    caller();
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    uint64_t off;
    const char *mod = module_of((uintptr_t)last_return, &off);
    char text[2048], want[64];
    assert_int_equal(gpufl__symbolize_frame(s, mod, off, true, text, sizeof text), GFL_SYM_OK);
    snprintf(want, sizeof want, "test_symbolize.c:%d", call_line);
    assert_true(!strncmp(text, "caller at ", 10));
    assert_non_null(strstr(text, want));
    gpufl__symbolizer_free(s);
}

/* libc's own function, even where a sanitizer runtime interposes one of
 * the same name. */
static uintptr_t libc_function(const char *name)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(libc);
    void *fn = dlsym(libc, name);
    assert_non_null(fn);
    dlclose(libc);
    return (uintptr_t)fn;
}

static void test_libc_function(void **state)
{
    (void)state;
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    uint64_t off;
    const char *mod = module_of(libc_function("qsort"), &off);
    assert_non_null(strstr(mod, "libc.so"));
    gpufl__symbol sym;
    assert_int_equal(gpufl__symbolize(s, mod, off, &sym), 0);
    assert_non_null(strstr(sym.function, "qsort"));
    /* libc again: from the cache */
    mod = module_of(libc_function("getpid"), &off);
    assert_int_equal(gpufl__symbolize(s, mod, off + 2, &sym), 0);
    assert_non_null(strstr(sym.function, "getpid"));
    char text[2048];
    gpufl__symbolize_frame(s, mod, off + 3, true, text, sizeof text);
    if (!sym.file[0]) /* no libc debug info on this machine */
        assert_non_null(strstr(text, "getpid+0x3 in libc.so"));
    else
        assert_non_null(strstr(text, "getpid at "));
    gpufl__symbolizer_free(s);
}

static void test_cpp_names_demangled(void **state)
{
    (void)state;
    void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        skip();
    void *fn = dlsym(lib, "_ZNSt9exceptionD1Ev"); /* std::exception::~exception() */
    assert_non_null(fn);
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    uint64_t off;
    const char *mod = module_of((uintptr_t)fn, &off);
    gpufl__symbol sym;
    assert_int_equal(gpufl__symbolize(s, mod, off, &sym), 0);
    assert_string_equal(sym.function, "std::exception::~exception()");
    gpufl__symbolizer_free(s);
    dlclose(lib);
}

static void test_fallbacks(void **state)
{
    (void)state;
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    gpufl__symbol sym;
    char text[2048];
    assert_int_equal(gpufl__symbolize(s, "/nonexistent/libnothing.so", 0x1234, &sym), GPUFL_ENOTFOUND);
    assert_int_equal(sym.status, GFL_SYM_NO_MODULE);
    assert_int_equal(gpufl__symbolize_frame(s, "/nonexistent/libnothing.so", 0x1234, true, text, sizeof text),
                     GFL_SYM_NO_MODULE);
    assert_string_equal(text, "/nonexistent/libnothing.so+0x1234");
    /* not an ELF file */
    assert_int_equal(gpufl__symbolize(s, "/proc/self/status", 0x10, &sym), GPUFL_ENOTFOUND);
    assert_int_equal(sym.status, GFL_SYM_NO_MODULE);
    /* no module (JIT code) */
    assert_int_equal(gpufl__symbolize_frame(s, NULL, 0x7f3a1c20, true, text, sizeof text), GFL_SYM_UNKNOWN_MODULE);
    assert_string_equal(text, "?+0x7f3a1c20");
    gpufl__symbolizer_free(s);
}

static void test_stripped_binary(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("symbolize");
    char copy[4200], cmd[9000];
    snprintf(copy, sizeof copy, "%s/stripped", dir);
    snprintf(cmd, sizeof cmd, "strip -o '%s' '%s' 2>/dev/null", copy, exe);
    if (system(cmd) != 0) {
        tu_rm_rf(dir);
        free(dir);
        skip(); /* no strip on this machine */
    }
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    uint64_t off;
    module_of((uintptr_t)known_function, &off);
    gpufl__symbol sym;
    assert_int_equal(gpufl__symbolize(s, copy, off, &sym), GPUFL_ENOTFOUND);
    assert_int_equal(sym.status, GFL_SYM_NO_SYMBOL);
    char text[2048], want[4400];
    gpufl__symbolize_frame(s, copy, off + 1, true, text, sizeof text);
    snprintf(want, sizeof want, "%s+0x%llx", copy, (unsigned long long)off + 1);
    assert_string_equal(text, want);
    gpufl__symbolizer_free(s);
    tu_rm_rf(dir);
    free(dir);
}

static void test_without_libdw(void **state)
{
    (void)state;
    if (gpufl__symbolizer_available())
        skip();
    gpufl__symbolizer *s = gpufl__symbolizer_new();
    uint64_t off;
    const char *mod = module_of((uintptr_t)known_function, &off);
    gpufl__symbol sym;
    assert_int_equal(gpufl__symbolize(s, mod, off, &sym), GPUFL_EUNSUPPORTED);
    assert_int_equal(sym.status, GFL_SYM_UNAVAILABLE);
    char text[8400], want[8400];
    gpufl__symbolize_frame(s, mod, off, true, text, sizeof text);
    snprintf(want, sizeof want, "%s+0x%llx", mod, (unsigned long long)off);
    assert_string_equal(text, want);
    gpufl__symbolizer_free(s);
}

int main(void)
{
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_own_function_with_line, skip_without_libdw),
        cmocka_unit_test_setup(test_return_address_gives_call_line, skip_without_libdw),
        cmocka_unit_test_setup(test_libc_function, skip_without_libdw),
        cmocka_unit_test_setup(test_cpp_names_demangled, skip_without_libdw),
        cmocka_unit_test_setup(test_fallbacks, skip_without_libdw),
        cmocka_unit_test_setup(test_stripped_binary, skip_without_libdw),
        cmocka_unit_test(test_without_libdw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
