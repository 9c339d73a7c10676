/*
 * gpufl_init() with hostile options and names: secrets in a broken config
 * file, a URL with a password, log paths past PATH_MAX or NAME_MAX, names
 * that are not UTF-8, GPUFL_DISABLED values it does not know, and session
 * directory names that someone created first.
 *
 * Why: each of these was reproduced on the landed code: a config file's
 * parse error echoed the API key to stderr and gpufl_last_error(); a
 * backend_url's password was written to session.json; a log_path past
 * PATH_MAX was cut and the cut path created; a non-UTF-8 app name or log
 * path failed as "out of memory"; GPUFL_DISABLED=maybe was silently ignored;
 * and session names carried 16 random bits, so 65536 pre-created names
 * blocked recording.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "hostile-options")

/* ---- stderr of the library, captured ------------------------------------ */

typedef struct captured {
    int saved;
    char path[4200];
} captured;

static void capture_stderr(captured *c)
{
    fflush(stderr);
    snprintf(c->path, sizeof c->path, "%s/stderr.txt", work);
    int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    c->saved = dup(2);
    assert_true(c->saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    close(fd);
}

/* What went to stderr since capture_stderr() (malloc'd). */
static char *release_stderr(captured *c)
{
    fflush(stderr);
    assert_int_equal(dup2(c->saved, 2), 2);
    close(c->saved);
    char *text = tu_read_file(c->path, NULL);
    assert_non_null(text);
    unlink(c->path);
    return text;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static size_t entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "stderr.txt");
    closedir(d);
    return n;
}

static void options_in(gpufl_options *o, const char *log_path)
{
    gpufl_options_init(o);
    o->app_name = "hostile";
    o->log_path = log_path;
    o->backend = GPUFL_BACKEND_NONE;
}

/* ---- d: a broken config file never has its text echoed ------------------- */

/* Each file holds the secret where the JSON parser stops, so that a message
 * quoting the text "near" the error would quote the secret. */
static void config_error_does_not_echo_the_file(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "{\"app_name\": \"a\",\n \"api_key\": sk-SECRET-4711}\n",
        "{\"api_key\": \"sk-SECRET-4711\" \"sk-SECRET-4711\"}\n",
        "{\"api_key\": \"sk-SECRET-4711\n",
        "{\"api_key\": \"sk-SECRET-4711\"}\nsk-SECRET-4711\n",
        "{\"api_key\": 4711471147114711471147114711}\n",
        "{\"api_key\": \"sk-SECRET-4711\", \"api_key\": \"sk-SECRET-4711\"}\n",
        "{\"api_key\": [\"sk-SECRET-4711\"]}\n",
    };
    char path[4300];
    snprintf(path, sizeof path, "%s/gpufl.json", work);
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        tu_write_file(path, bodies[i]);
        gpufl_options o;
        options_in(&o, work);
        o.config_file = path;
        captured c;
        capture_stderr(&c);
        bool ok = gpufl_init(&o);
        char *err = release_stderr(&c);
        const char *last = gpufl_last_error();
        if (ok)
            fail_msg("config %zu: gpufl_init accepted it", i);
        if (strstr(last, "SECRET") || strstr(last, "4711") || strstr(err, "SECRET") || strstr(err, "4711"))
            fail_msg("config %zu echoes the file:\nlast error: %s\nstderr: %s", i, last, err);
        if (!strstr(last, path) || !strstr(err, path))
            fail_msg("config %zu: the file is not named:\nlast error: %s\nstderr: %s", i, last, err);
        free(err);
    }
    /* a parse error still says where */
    tu_write_file(path, bodies[0]);
    gpufl_options o;
    options_in(&o, work);
    o.config_file = path;
    assert_false(gpufl_init(&o));
    if (!strstr(gpufl_last_error(), "line 2"))
        fail_msg("no line number: %s", gpufl_last_error());
}

/* A config file that is a FIFO is refused at once instead of blocking
 * gpufl_init() until something writes to it (in a child, which SIGALRM
 * ends if it blocks). */
static int config_fifo_in_child(void)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/gpufl.json", work);
    if (mkfifo(path, 0600) != 0)
        return __LINE__;
    gpufl_options o;
    options_in(&o, work);
    o.config_file = path;
    alarm(30);
    if (gpufl_init(&o))
        return __LINE__;
    alarm(0);
    if (!strstr(gpufl_last_error(), path) || !strstr(gpufl_last_error(), "not a regular file")) {
        fprintf(stderr, "%s\n", gpufl_last_error());
        return __LINE__;
    }
    return 0;
}

static void config_file_fifo(void **state)
{
    (void)state;
    tu_expect_child_ok(config_fifo_in_child, __FILE__);
}

/* ---- e: paths too long for the file system ------------------------------- */

static void refused_and_nothing_created(const char *log_path, const char *expect)
{
    gpufl_options o;
    options_in(&o, log_path);
    captured c;
    capture_stderr(&c);
    bool ok = gpufl_init(&o);
    free(release_stderr(&c));
    if (ok) {
        gpufl_shutdown();
        fail_msg("gpufl_init accepted a log_path of %zu bytes", strlen(log_path));
    }
    if (!strstr(gpufl_last_error(), expect))
        fail_msg("expected \"%s\" in: %s", expect, gpufl_last_error());
    if (entries_in(work) != 0)
        fail_msg("a refused log_path left directories in %s", work);
}

static void log_path_too_long(void **state)
{
    (void)state;
    size_t n = PATH_MAX + 100;
    char *p = malloc(n + 1);
    int k = snprintf(p, n + 1, "%s", work);
    while ((size_t)k + 3 < n)
        k += snprintf(p + k, n + 1 - (size_t)k, "/ab");
    refused_and_nothing_created(p, "PATH_MAX");

    /* short enough itself (PATH_MAX - 40 bytes), but not with the session
     * directory (more than 40 bytes of name) and its files inside */
    size_t target = PATH_MAX - 40;
    k = snprintf(p, n + 1, "%s", work);
    while ((size_t)k + 1 + 100 < target)
        k += snprintf(p + k, n + 1 - (size_t)k, "/%0100d", 0);
    p[k++] = '/';
    memset(p + k, 'y', target - (size_t)k);
    p[target] = '\0';
    assert_int_equal(strlen(p), target);
    refused_and_nothing_created(p, "PATH_MAX");

    /* one component longer than NAME_MAX */
    k = snprintf(p, n + 1, "%s/ok/", work);
    memset(p + k, 'x', NAME_MAX + 1);
    p[k + NAME_MAX + 1] = '\0';
    refused_and_nothing_created(p, "NAME_MAX");
    free(p);
}

/* ---- b: names that are not UTF-8 ------------------------------------------ */

/* An app name and a log path with bytes that are not UTF-8 are recorded,
 * with U+FFFD in their place in session.json as in the NDJSON logs (both
 * stay valid JSON), and a warning says which option and where. */
static void names_not_utf8(void **state)
{
    (void)state;
    char log_path[4300];
    snprintf(log_path, sizeof log_path, "%s/logs-\xe9t\xe9", work);
    gpufl_options o;
    options_in(&o, log_path);
    o.app_name = "caf\xe9\xff";
    captured c;
    capture_stderr(&c);
    bool ok = gpufl_init(&o);
    gpufl_shutdown();
    char *err = release_stderr(&c);
    if (!ok)
        fail_msg("gpufl_init: %s", gpufl_last_error());
    if (!strstr(err, "app_name") || !strstr(err, "UTF-8") || !strstr(err, "offset 3"))
        fail_msg("no warning about app_name: %s", err);
    if (!strstr(err, "log_path"))
        fail_msg("no warning about log_path: %s", err);
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    json_t *j = tu_session_json(dir); /* fails unless it parses */
    assert_string_equal(tu_str(j, "app_name"), "caf\xef\xbf\xbd\xef\xbf\xbd");
    assert_non_null(strstr(tu_str(j, "log_dir"), "logs-\xef\xbf\xbdt\xef\xbf\xbd"));
    json_decref(j);
    tu_ndjson lines = {0};
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &lines), 0);
    assert_true(lines.n > 0);
    tu_ndjson_free(&lines);
    free(dir);
    free(err);
}

/* ---- f: the password of a backend URL ------------------------------------ */

static void backend_url_userinfo_redacted(void **state)
{
    (void)state;
    gpufl_options o;
    options_in(&o, work);
    o.backend_url = "https://alice:pa55word@collector.example:8443/gpufl?x=@y";
    assert_true(gpufl_init(&o));
    gpufl_shutdown();
    char *dir = tu_session_dir(work);
    assert_non_null(dir);
    json_t *j = tu_session_json(dir);
    assert_string_equal(tu_str(json_object_get(j, "options"), "backend_url"),
                        "https://***@collector.example:8443/gpufl?x=@y");
    json_decref(j);
    /* nowhere in the session */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = tu_read_file(path, NULL);
        if (text && (strstr(text, "pa55word") || strstr(text, "alice")))
            fail_msg("%s holds the URL's userinfo", path);
        free(text);
    }
    closedir(d);
    free(dir);
}

/* ---- g: GPUFL_DISABLED values it does not know ---------------------------- */

static const char *disabled_value;

/* In a child: the warning comes once, on stderr, for two sessions, and
 * gpufl records; nothing goes to stdout. */
static int unknown_disabled_value_warns_once(void)
{
    char out_path[4300];
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", work);
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || dup2(fd, 1) != 1)
        return __LINE__;
    tu_setenv("GPUFL_DISABLED", disabled_value);
    captured c;
    capture_stderr(&c);
    for (int i = 0; i < 2; i++) {
        gpufl_options o;
        options_in(&o, work);
        if (!gpufl_init(&o) || !gpufl_is_recording())
            return __LINE__;
        gpufl_shutdown();
    }
    char *err = release_stderr(&c);
    fflush(stdout);
    char *out = tu_read_file(out_path, NULL);
    if (!out || out[0]) {
        fprintf(stderr, "stdout: %s\n", out ? out : "(unreadable)");
        return __LINE__;
    }
    if (count_of(err, "GPUFL_DISABLED") != 1 || !strstr(err, disabled_value) || !strstr(err, "1/true/yes/on") ||
        !strstr(err, "0/false/no/off") || !strstr(err, "enabled")) {
        fprintf(stderr, "stderr (GPUFL_DISABLED=%s): %s\n", disabled_value, err);
        return __LINE__;
    }
    return 0;
}

static void disabled_maybe(void **state)
{
    (void)state;
    disabled_value = "maybe";
    tu_expect_child_ok(unknown_disabled_value_warns_once, __FILE__);
}

static void disabled_2(void **state)
{
    (void)state;
    disabled_value = "2";
    tu_expect_child_ok(unknown_disabled_value_warns_once, __FILE__);
}

/* Values it knows, and empty, say nothing. */
static int known_disabled_values_are_quiet(void)
{
    static const char *const values[] = {"", "0", "off", "No", "false"};
    captured c;
    capture_stderr(&c);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        tu_setenv("GPUFL_DISABLED", values[i]);
        gpufl_options o;
        options_in(&o, work);
        if (!gpufl_init(&o) || !gpufl_is_recording())
            return __LINE__;
        gpufl_shutdown();
    }
    char *err = release_stderr(&c);
    if (strstr(err, "GPUFL_DISABLED")) {
        fprintf(stderr, "stderr: %s\n", err);
        return __LINE__;
    }
    return 0;
}

static void disabled_known(void **state)
{
    (void)state;
    tu_expect_child_ok(known_disabled_values_are_quiet, __FILE__);
}

/* ---- h: session directory names ------------------------------------------ */

/* <app>-<yyyymmdd>-<hhmmss>-<pid>-<64 random bits as 16 hex digits>: too
 * many to create in advance. */
static void session_name_has_64_random_bits(void **state)
{
    (void)state;
    gpufl_options o;
    options_in(&o, work);
    assert_true(gpufl_init(&o));
    gpufl_shutdown();
    char *dir = tu_session_dir(work);
    assert_non_null(dir);
    const char *base = strrchr(dir, '/') + 1;
    regex_t re;
    assert_int_equal(regcomp(&re, "^hostile-[0-9]{8}-[0-9]{6}-[0-9]+-[0-9a-f]{16}$", REG_EXTENDED | REG_NOSUB), 0);
    if (regexec(&re, base, 0, NULL, 0) != 0)
        fail_msg("session directory name %s", base);
    regfree(&re);
    json_t *j = tu_session_json(dir);
    assert_string_equal(tu_str(j, "session_id"), base);
    json_decref(j);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(config_error_does_not_echo_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(config_file_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(log_path_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(names_not_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(backend_url_userinfo_redacted, setup, teardown),
        cmocka_unit_test_setup_teardown(disabled_maybe, setup, teardown),
        cmocka_unit_test_setup_teardown(disabled_2, setup, teardown),
        cmocka_unit_test_setup_teardown(disabled_known, setup, teardown),
        cmocka_unit_test_setup_teardown(session_name_has_64_random_bits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
