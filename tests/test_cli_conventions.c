/*
 * What every `gpufl` command does with --help, -h, `gpufl help CMD`, a bad
 * flag and missing operands, and what `gpufl` does with an unknown command
 * (src/cli/help.c, src/cli/main.c).
 *
 * Why: scripts pipe `gpufl CMD --help | less` and test exit codes; one
 * command printing its help to stderr with exit 64 while the next prints it
 * to stdout with 0 (as six of them once did) breaks both. The rule, for
 * every command: help on stdout, exit 0, nothing on stderr; a usage error
 * on stderr naming what was wrong, with the command's usage line, nothing
 * on stdout, exit 64 (diff and replay-check: 2, as README says); an unknown command one line
 * pointing at `gpufl help`, not the whole list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef struct command {
    const char *name;
    int usage_exit;    /* exit code of a usage error */
    int needs_operand; /* run without arguments, it is a usage error */
} command;

/* Every command `gpufl help` lists; test_list_names_every_command checks
 * that the two agree. */
static const command commands[] = {
    {"devices", 64, 0}, {"monitor", 64, 0},  {"run", 64, 1},     {"summary", 64, 1},     {"stacks", 64, 1},
    {"report", 64, 1},  {"info", 64, 1},     {"view", 64, 1},    {"diff", 2, 1},         {"export", 64, 1},
    {"convert", 64, 1}, {"options", 64, 0},  {"version", 64, 0}, {"help", 64, 0},        {"dump", 64, 1},
    {"mem", 2, 1},      {"exporter", 64, 0}, {"merge", 64, 1},   {"replay-check", 2, 1}, {"upload", 2, 1},
    {"graph", 64, 1},   {"whatif", 64, 1},   {"serve", 64, 0},   {"fleet", 64, 1},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

typedef struct outcome {
    int code;
    char *out, *err;
} outcome;

static outcome run_cli(const char *const *argv)
{
    outcome o = {0, NULL, NULL};
    o.code = tu_run(argv, &o.out, &o.err);
    assert_non_null(o.out);
    assert_non_null(o.err);
    return o;
}

static void outcome_free(outcome *o)
{
    free(o->out);
    free(o->err);
}

static void expect_help(const char *what, const command *c, const outcome *o)
{
    char usage[64];
    snprintf(usage, sizeof usage, "usage: gpufl %s", c->name);
    if (o->code != 0 || o->err[0] || strncmp(o->out, usage, strlen(usage)) != 0)
        fail_msg("%s: exit %d, stdout:\n%s\nstderr:\n%s\nexpected its help on stdout, exit 0, empty "
                 "stderr",
                 what, o->code, o->out, o->err);
}

static void expect_usage_error(const char *what, const command *c, const outcome *o, const char *named)
{
    char usage[64], prefix[64];
    snprintf(usage, sizeof usage, "usage: gpufl %s", c->name);
    snprintf(prefix, sizeof prefix, "gpufl %s: ", c->name);
    if (o->code != c->usage_exit || o->out[0] || strncmp(o->err, prefix, strlen(prefix)) != 0 ||
        !strstr(o->err, usage) || (named && !strstr(o->err, named)))
        fail_msg("%s: exit %d, stdout:\n%s\nstderr:\n%s\nexpected exit %d, '%s...' naming '%s' and the usage "
                 "line on stderr, empty stdout",
                 what, o->code, o->out, o->err, c->usage_exit, prefix, named ? named : "");
}

/* --help, -h and `gpufl help CMD`: the same text, on stdout, exit 0. */
static void test_help_everywhere(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        char what[64];
        outcome help = run_cli((const char *const[]){GFL_CLI, "help", c->name, NULL});
        snprintf(what, sizeof what, "gpufl help %s", c->name);
        expect_help(what, c, &help);
        static const char *const flags[] = {"--help", "-h"};
        for (size_t f = 0; f < 2; f++) {
            outcome o = run_cli((const char *const[]){GFL_CLI, c->name, flags[f], NULL});
            snprintf(what, sizeof what, "gpufl %s %s", c->name, flags[f]);
            expect_help(what, c, &o);
            assert_string_equal(o.out, help.out);
            outcome_free(&o);
        }
        /* after an operand too, as getopt allows */
        outcome late = run_cli((const char *const[]){GFL_CLI, c->name, "some-session", "--help", NULL});
        snprintf(what, sizeof what, "gpufl %s some-session --help", c->name);
        if (strcmp(c->name, "run") != 0) { /* run: PROGRAM's own --help, below */
            expect_help(what, c, &late);
            assert_string_equal(late.out, help.out);
        }
        outcome_free(&late);
        outcome_free(&help);
    }
}

/* An unknown flag: a usage error that names it. */
static void test_bad_flag(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        outcome o = run_cli((const char *const[]){GFL_CLI, c->name, "--no-such-flag", NULL});
        char what[64];
        snprintf(what, sizeof what, "gpufl %s --no-such-flag", c->name);
        expect_usage_error(what, c, &o, "--no-such-flag");
        outcome_free(&o);
    }
}

/* A command that needs an operand, run without one. */
static void test_no_arguments(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        if (!c->needs_operand)
            continue;
        outcome o = run_cli((const char *const[]){GFL_CLI, c->name, NULL});
        char what[64];
        snprintf(what, sizeof what, "gpufl %s", c->name);
        expect_usage_error(what, c, &o, NULL);
        outcome_free(&o);
    }
}

/* Too many operands, for the commands that take a fixed number. */
static void test_extra_operand(void **state)
{
    (void)state;
    /* each names the first operand too many: 'b' after one SESSION, 'c' after two (report takes a
     * job's sessions, any number) */
    static const struct {
        const char *name, *extra;
    } fixed[] = {{"summary", "'b'"}, {"stacks", "'b'"}, {"info", "'b'"},         {"view", "'b'"},  {"export", "'b'"},
                 {"convert", "'c'"}, {"diff", "'c'"},   {"replay-check", "'c'"}, {"graph", "'b'"}, {"whatif", "'b'"}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        const command *c = NULL;
        for (size_t j = 0; j < NCOMMANDS; j++)
            if (!strcmp(commands[j].name, fixed[i].name))
                c = &commands[j];
        assert_non_null(c);
        outcome o = run_cli((const char *const[]){GFL_CLI, c->name, "a", "b", "c", NULL});
        char what[64];
        snprintf(what, sizeof what, "gpufl %s a b c", c->name);
        expect_usage_error(what, c, &o, fixed[i].extra);
        outcome_free(&o);
    }
}

/* gpufl itself: the list on stdout when asked for, on stderr (exit 64)
 * when nothing was asked; an unknown command gets one line. */
static void test_gpufl_itself(void **state)
{
    (void)state;
    static const char *const asks[] = {"help", "--help", "-h"};
    for (size_t i = 0; i < 3; i++) {
        outcome o = run_cli((const char *const[]){GFL_CLI, asks[i], NULL});
        assert_int_equal(o.code, 0);
        assert_string_equal(o.err, "");
        assert_non_null(strstr(o.out, "usage: gpufl COMMAND"));
        assert_non_null(strstr(o.out, "64  bad usage"));
        outcome_free(&o);
    }
    outcome bare = run_cli((const char *const[]){GFL_CLI, NULL});
    assert_int_equal(bare.code, 64);
    assert_string_equal(bare.out, "");
    assert_non_null(strstr(bare.err, "usage: gpufl COMMAND"));
    outcome_free(&bare);

    outcome unknown = run_cli((const char *const[]){GFL_CLI, "frobnicate", "x", NULL});
    assert_int_equal(unknown.code, 64);
    assert_string_equal(unknown.out, "");
    assert_string_equal(unknown.err, "gpufl: unknown command 'frobnicate'; run 'gpufl help' for the list\n");
    outcome_free(&unknown);

    outcome help_unknown = run_cli((const char *const[]){GFL_CLI, "help", "frobnicate", NULL});
    assert_int_equal(help_unknown.code, 64);
    assert_string_equal(help_unknown.out, "");
    assert_non_null(strstr(help_unknown.err, "unknown command 'frobnicate'"));
    const char *nl = strchr(help_unknown.err, '\n');
    assert_true(nl && nl[1] == '\0'); /* one line */
    outcome_free(&help_unknown);

    outcome version = run_cli((const char *const[]){GFL_CLI, "--version", NULL});
    assert_int_equal(version.code, 0);
    assert_true(!strncmp(version.out, "gpufl ", 6));
    outcome_free(&version);
}

/* The list names every command of this test, and this test every command
 * of the list: a new command cannot miss these checks. */
static void test_list_names_every_command(void **state)
{
    (void)state;
    outcome o = run_cli((const char *const[]){GFL_CLI, "help", NULL});
    size_t listed = 0;
    for (const char *p = strstr(o.out, "\n  gpufl "); p; p = strstr(p + 1, "\n  gpufl ")) {
        const char *name = p + strlen("\n  gpufl ");
        size_t n = strcspn(name, " \n");
        int known = 0;
        for (size_t i = 0; i < NCOMMANDS; i++)
            known |= strlen(commands[i].name) == n && !strncmp(commands[i].name, name, n);
        if (!known)
            fail_msg("gpufl help lists '%.*s', which this test does not check", (int)n, name);
        listed++;
    }
    assert_int_equal(listed, NCOMMANDS);
    outcome_free(&o);
}

/* `gpufl run PROGRAM --help`: PROGRAM's own --help, not gpufl's. */
static void test_run_leaves_program_flags_alone(void **state)
{
    (void)state;
    outcome o = run_cli((const char *const[]){GFL_CLI, "run", GFL_INJECT_TARGET, "--help", NULL});
    /* inject_target does not know --help: its usage on stderr, exit 95 */
    assert_int_equal(o.code, 95);
    assert_non_null(strstr(o.err, "usage: inject_target"));
    assert_null(strstr(o.out, "usage: gpufl"));
    outcome_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_everywhere),
        cmocka_unit_test(test_bad_flag),
        cmocka_unit_test(test_no_arguments),
        cmocka_unit_test(test_extra_operand),
        cmocka_unit_test(test_gpufl_itself),
        cmocka_unit_test(test_list_names_every_command),
        cmocka_unit_test(test_run_leaves_program_flags_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
