/*
 * The code in README.md: every ```c and ```cpp block is compiled against
 * this build's headers and libgpufl.so, linked and run.
 *
 * Why: the README is the first code a user copies, and it had drifted (its
 * C example called fprintf without <stdio.h>). A block with a main() is a
 * whole program and is compiled as it stands. Any other block is a
 * fragment: a sequence of statements inside a function of the user's. The
 * wrapper hoists its preprocessor lines (#include) to file scope and puts
 * the rest in `static int readme_fragment(const char *dir)`, run with the
 * bundled sample session as `dir`; it includes no header itself, so a
 * fragment must name what it uses. Fragments also get stand-ins for the
 * user's own code (C++: `batch`, `forward`, `backward`, `save`; C:
 * `run_with_another_profiler`): a fragment that calls anything else, or
 * calls gpufl wrongly, fails. Every
 * program is built with -Wall -Wextra -Werror and #line directives, so an
 * error names README.md and its line. The same harness is shown to reject
 * wrong code (the old C example, a fragment missing its #include), and the
 * C++ wrapper to refuse, by name, a standard before C++17.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#ifndef GFL_README_SANITIZE
#define GFL_README_SANITIZE ""
#endif

TU_TEMP_DIR_FIXTURES(work, "readme")

enum lang { LANG_C, LANG_CXX };

typedef struct block {
    enum lang lang;
    int line; /* README line of the block's first line of code */
    char *code;
} block;

typedef struct blocks {
    block *v;
    size_t n;
} blocks;

/* The language of a fence line's info string, or -1 for a fence of another
 * language (or none): only these are compiled. */
static int fence_lang(const char *info, size_t len)
{
    while (len && (info[len - 1] == ' ' || info[len - 1] == '\r'))
        len--;
    if (len == 1 && info[0] == 'c')
        return LANG_C;
    if ((len == 3 && memcmp(info, "cpp", 3) == 0) || (len == 3 && memcmp(info, "c++", 3) == 0))
        return LANG_CXX;
    return -1;
}

/* Every ```c and ```cpp block of a Markdown text, in order. Fences of other
 * languages are skipped whole, so their contents are never taken for
 * fences. */
static blocks extract(const char *md)
{
    blocks out = {NULL, 0};
    const char *p = md;
    int line = 0, lang = -1, first = 0;
    bool inside = false;
    size_t start = 0;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        line++;
        bool fence = len >= 3 && memcmp(p, "```", 3) == 0;
        /* a closing fence has no info string (CommonMark) */
        size_t rest = 3;
        while (rest < len && (p[rest] == ' ' || p[rest] == '\r'))
            rest++;
        if (inside && fence && rest != len)
            fence = false;
        if (fence && !inside) {
            inside = true;
            lang = fence_lang(p + 3, len - 3);
            first = line + 1;
            start = (size_t)(p - md) + len + (eol ? 1 : 0);
        } else if (fence && inside) {
            inside = false;
            if (lang >= 0) {
                out.v = realloc(out.v, (out.n + 1) * sizeof *out.v);
                assert_non_null(out.v);
                size_t n = (size_t)(p - md) - start;
                char *code = malloc(n + 1);
                assert_non_null(code);
                memcpy(code, md + start, n);
                code[n] = '\0';
                out.v[out.n++] = (block){(enum lang)lang, first, code};
            }
        }
        p += len + (eol ? 1 : 0);
    }
    if (inside)
        fail_msg("README.md: the code block opened at line %d is never closed", first - 1);
    return out;
}

static void blocks_free(blocks *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].code);
    free(b->v);
}

/* Whether the code defines main: an identifier `main` followed by `(`. */
static bool has_main(const char *code)
{
    for (const char *p = strstr(code, "main"); p; p = strstr(p + 1, "main")) {
        bool starts = p == code || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                     (p[-1] >= '0' && p[-1] <= '9'));
        const char *q = p + 4;
        while (*q == ' ')
            q++;
        if (starts && *q == '(')
            return true;
    }
    return false;
}

/* The user's own code that fragments call around gpufl, nothing more. */
static const char c_stand_ins[] = "__attribute__((unused)) static void run_with_another_profiler(void) {}\n";
static const char cxx_stand_ins[] = "namespace {\n"
                                    "struct readme_batch { float scale = 0.5f; };\n"
                                    "[[maybe_unused]] readme_batch batch;\n"
                                    "[[maybe_unused]] float forward(const readme_batch &b) { return b.scale; }\n"
                                    "[[maybe_unused]] void backward(float loss) { (void)loss; }\n"
                                    "[[maybe_unused]] void save() {}\n"
                                    "}\n";

static void append(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    *buf = realloc(*buf, *len + (size_t)n + 1);
    assert_non_null(*buf);
    va_start(ap, fmt);
    vsnprintf(*buf + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

/* The source file compiled for a block (malloc'd): a whole program as it
 * stands, a fragment wrapped as the file comment says. */
static char *source_of(const block *b, const char *readme)
{
    char *s = NULL;
    size_t n = 0;
    append(&s, &n, "%s", "");
    if (has_main(b->code)) {
        append(&s, &n, "#line %d \"%s\"\n%s", b->line, readme, b->code);
        return s;
    }
    /* preprocessor lines to file scope, each with its README line */
    int line = b->line;
    for (const char *p = b->code; *p; line++) {
        const char *eol = strchr(p, '\n');
        int len = eol ? (int)(eol - p) : (int)strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        if (q < p + len && *q == '#')
            append(&s, &n, "#line %d \"%s\"\n%.*s\n", line, readme, len, p);
        p += len + (eol ? 1 : 0);
    }
    append(&s, &n, "%s", b->lang == LANG_C ? c_stand_ins : cxx_stand_ins);
    append(&s, &n, "static int readme_fragment(const char *dir)\n{\n(void)dir;\n#line %d \"%s\"\n", b->line, readme);
    /* the statements, preprocessor lines blanked so that lines still match */
    for (const char *p = b->code; *p;) {
        const char *eol = strchr(p, '\n');
        int len = eol ? (int)(eol - p) : (int)strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        append(&s, &n, "%.*s\n", q < p + len && *q == '#' ? 0 : len, p);
        p += len + (eol ? 1 : 0);
    }
    append(&s, &n,
           "return 0;\n}\nint main(int argc, char **argv)\n{\n"
           "return readme_fragment(argc > 1 ? argv[1] : \"\");\n}\n");
    return s;
}

/* Compiles and links a block's source into exe with the given language
 * standard. Returns the compiler's exit status; its messages in *msg. */
static int build(const block *b, const char *readme, const char *std, const char *exe, char **msg)
{
    char src[4200], lib_dir[4200], rpath[4300], inc[4200], std_flag[64], sanitize[128];
    snprintf(src, sizeof src, "%s.%s", exe, b->lang == LANG_C ? "c" : "cpp");
    char *text = source_of(b, readme);
    tu_write_file(src, text);
    free(text);
    snprintf(lib_dir, sizeof lib_dir, "%s", GFL_README_LIB);
    char *slash = strrchr(lib_dir, '/');
    assert_non_null(slash);
    *slash = '\0';
    snprintf(rpath, sizeof rpath, "-Wl,-rpath,%s", lib_dir);
    snprintf(inc, sizeof inc, "-I%s/include", GFL_SOURCE_DIR);
    snprintf(std_flag, sizeof std_flag, "-std=%s", std);
    const char *argv[16] = {b->lang == LANG_C ? GFL_README_CC : GFL_README_CXX,
                            std_flag,
                            "-Wall",
                            "-Wextra",
                            "-Werror",
                            inc,
                            src,
                            "-o",
                            exe,
                            GFL_README_LIB,
                            rpath};
    size_t argc = 11;
    /* a sanitizer build's libgpufl needs the sanitizer runtime in the program */
    if (GFL_README_SANITIZE[0]) {
        snprintf(sanitize, sizeof sanitize, "-fsanitize=%s", GFL_README_SANITIZE);
        argv[argc++] = sanitize;
    }
    argv[argc] = NULL;
    char *out = NULL, *err = NULL;
    int rc = tu_run(argv, &out, &err);
    size_t n = 0;
    *msg = NULL;
    append(msg, &n, "%s%s", out ? out : "", err ? err : "");
    free(out);
    free(err);
    return rc;
}

static blocks readme_blocks(char **readme_text)
{
    *readme_text = tu_read_file(GFL_SOURCE_DIR "/README.md", NULL);
    assert_non_null(*readme_text);
    return extract(*readme_text);
}

static void test_readme_blocks_build_and_run(void **state)
{
    (void)state;
    char *md;
    blocks bs = readme_blocks(&md);
    size_t n_c = 0, n_cxx = 0;
    for (size_t i = 0; i < bs.n; i++) {
        const block *b = &bs.v[i];
        *(b->lang == LANG_C ? &n_c : &n_cxx) += 1;
        char exe[4200], logs[4200], *msg;
        snprintf(exe, sizeof exe, "%s/readme_%d", work, b->line);
        snprintf(logs, sizeof logs, "%s/logs_%d", work, b->line);
        if (build(b, GFL_SOURCE_DIR "/README.md", b->lang == LANG_C ? "c11" : "c++17", exe, &msg) != 0) {
            /* cmocka cuts long messages: the compiler's go out whole first */
            fprintf(stderr, "%s\n", msg);
            fail_msg("README.md:%d: this %s block does not compile (the compiler's messages are above)", b->line,
                     b->lang == LANG_C ? "C" : "C++");
        }
        free(msg);
        /* a program that records writes its session here, not into the build tree */
        tu_setenv("GPUFL_LOG_PATH", logs);
        const char *argv[] = {exe, GFL_SOURCE_DIR "/samples/train_sample", NULL};
        if (has_main(b->code))
            argv[1] = NULL;
        char *out = NULL, *err = NULL;
        int rc = tu_run(argv, &out, &err);
        if (rc != 0) {
            fprintf(stderr, "%s\n", err ? err : "");
            fail_msg("README.md:%d: the block built, but its program exited %d (its stderr is above)", b->line, rc);
        }
        free(out);
        free(err);
    }
    /* the README shows both languages: an extraction that found none is broken */
    assert_true(n_c >= 1);
    assert_true(n_cxx >= 1);
    blocks_free(&bs);
    free(md);
}

/* The harness itself: it finds only C and C++ blocks, tells programs from
 * fragments, and fails on code that is wrong in the ways README's was. */
static void test_harness_rejects_wrong_code(void **state)
{
    (void)state;
    static const char md[] = "text\n"
                             "```sh\n```c\n```\n"
                             "```c\n"
                             "#include <gpufl/gpufl.h>\n"
                             "int main(void) { fprintf(stderr, \"%s\\n\", gpufl_last_error()); }\n"
                             "```\n"
                             "```c\n"
                             "printf(\"%d\\n\", 1);\n"
                             "```\n"
                             "```cpp\n"
                             "#include <gpufl/gpufl.hpp>\n"
                             "gpufl::init(opts);\n"
                             "```\n"
                             "```cpp\n"
                             "#include <gpufl/gpufl.hpp>\n"
                             "gpufl::InitOptions opts;\n"
                             "opts.app_name = \"harness\";\n"
                             "```\n";
    blocks bs = extract(md);
    assert_int_equal(bs.n, 4);
    assert_int_equal(bs.v[0].lang, LANG_C);
    assert_int_equal(bs.v[0].line, 6);
    assert_true(has_main(bs.v[0].code));
    assert_false(has_main(bs.v[1].code));
    assert_int_equal(bs.v[2].lang, LANG_CXX);
    assert_false(has_main("int domain(void);"));
    const char *why[] = {"a program missing <stdio.h>", "a fragment missing <stdio.h>",
                         "a fragment using what it never declared"};
    for (size_t i = 0; i < 3; i++) {
        char exe[4200], *msg;
        snprintf(exe, sizeof exe, "%s/wrong_%zu", work, i);
        if (build(&bs.v[i], "harness.md", bs.v[i].lang == LANG_C ? "c11" : "c++17", exe, &msg) == 0)
            fail_msg("the harness compiled %s", why[i]);
        /* the error points into the Markdown file */
        if (!strstr(msg, "harness.md:"))
            fail_msg("the compiler's message for %s does not name the Markdown file:\n%s", why[i], msg);
        free(msg);
    }
    char exe[4200], *msg;
    snprintf(exe, sizeof exe, "%s/right", work);
    if (build(&bs.v[3], "harness.md", "c++17", exe, &msg) != 0)
        fail_msg("a correct C++ fragment did not compile:\n%s", msg);
    free(msg);
    blocks_free(&bs);
}

/* README says the C++ header needs C++17; an older standard gets that
 * message from the header, not a page of template errors. */
static void test_cxx_header_needs_cxx17(void **state)
{
    (void)state;
    char *md;
    blocks bs = readme_blocks(&md);
    assert_non_null(strstr(md, "C++17"));
    const block *cxx = NULL;
    for (size_t i = 0; i < bs.n && !cxx; i++)
        if (bs.v[i].lang == LANG_CXX)
            cxx = &bs.v[i];
    assert_non_null(cxx);
    char exe[4200], *msg;
    snprintf(exe, sizeof exe, "%s/cxx14", work);
    assert_int_not_equal(build(cxx, GFL_SOURCE_DIR "/README.md", "c++14", exe, &msg), 0);
    if (!strstr(msg, "gpufl.hpp needs C++17"))
        fail_msg("compiled as C++14, the header did not say it needs C++17:\n%s", msg);
    free(msg);
    blocks_free(&bs);
    free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_readme_blocks_build_and_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_harness_rejects_wrong_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cxx_header_needs_cxx17, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
