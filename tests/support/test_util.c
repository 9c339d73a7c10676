/*
 * Test helpers (see test_util.h).
 */
#include "test_util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpufl/gpufl.h"

extern char **environ;

static void die(const char *what, const char *path)
{
    fprintf(stderr, "test helper: %s '%s': %s\n", what, path, strerror(errno));
    abort();
}

void tu_end_session(char **log_path)
{
    gpufl_shutdown();
    if (*log_path) {
        tu_rm_rf(*log_path);
        free(*log_path);
        *log_path = NULL;
    }
}

char *tu_session_dir(const char *log_path)
{
    DIR *d = opendir(log_path);
    if (!d)
        return NULL;
    char *found = NULL;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        count++;
        free(found);
        found = malloc(4096);
        snprintf(found, 4096, "%s/%s", log_path, e->d_name);
    }
    closedir(d);
    if (count != 1) {
        free(found);
        return NULL;
    }
    return found;
}

static void append_lines(tu_ndjson *out, const char *path, char *text, size_t len, int *rc)
{
    size_t line_no = 0;
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            out->tail_bytes = (size_t)(end - p);
            break;
        }
        line_no++;
        json_error_t err;
        json_t *j = json_loadb(p, (size_t)(nl - p), 0, &err);
        if (!j || !json_is_object(j) || !json_is_string(json_object_get(j, "type"))) {
            fprintf(stderr, "%s: line %zu is not a JSON object with a type: %s\n  %.*s\n", path, line_no,
                    j ? "no type" : err.text, (int)(nl - p > 300 ? 300 : nl - p), p);
            json_decref(j);
            *rc = -1;
        } else {
            if (out->n == out->cap) {
                /* geometric growth: logs of millions of lines load in linear time */
                out->cap = out->cap ? out->cap * 2 : 1024;
                out->lines = realloc(out->lines, out->cap * sizeof *out->lines);
            }
            out->lines[out->n++] = j;
        }
        p = nl + 1;
    }
}

int tu_ndjson_load(const char *path, tu_ndjson *out)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *text = tu_read_file(path, &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    append_lines(out, path, text, len, &rc);
    free(text);
    return rc;
}

int tu_ndjson_load_channel(const char *dir, const char *channel, tu_ndjson *out)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (int part = 1;; part++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%d.log", dir, channel, part);
        size_t len;
        char *text = tu_read_file(path, &len);
        if (!text)
            break;
        append_lines(out, path, text, len, &rc);
        free(text);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.log", dir, channel);
    size_t len;
    char *text = tu_read_file(path, &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    append_lines(out, path, text, len, &rc);
    free(text);
    return rc;
}

void tu_ndjson_free(tu_ndjson *f)
{
    for (size_t i = 0; i < f->n; i++)
        json_decref(f->lines[i]);
    free(f->lines);
    memset(f, 0, sizeof *f);
}

static bool is_type(json_t *line, const char *type)
{
    const char *t = json_string_value(json_object_get(line, "type"));
    return t && !strcmp(t, type);
}

size_t tu_count_type(const tu_ndjson *f, const char *type)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += is_type(f->lines[i], type);
    return n;
}

bool tu_logged(const char *dir, const char *a, const char *b)
{
    tu_ndjson sys;
    if (tu_ndjson_load_channel(dir, "system", &sys) != 0)
        return false;
    bool found = false;
    for (size_t i = 0; i < tu_count_type(&sys, "log"); i++) {
        const char *m = tu_str(tu_nth_type(&sys, "log", i), "message");
        if (m && strstr(m, a) && strstr(m, b))
            found = true;
    }
    tu_ndjson_free(&sys);
    return found;
}

json_t *tu_nth_type(const tu_ndjson *f, const char *type, size_t i)
{
    for (size_t k = 0; k < f->n; k++)
        if (is_type(f->lines[k], type) && i-- == 0)
            return f->lines[k];
    return NULL;
}

long long tu_sum_field(const tu_ndjson *f, const char *type, const char *field)
{
    long long sum = 0;
    for (size_t i = 0; i < f->n; i++)
        if (is_type(f->lines[i], type))
            sum += json_integer_value(json_object_get(f->lines[i], field));
    return sum;
}

int tu_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

bool tu_mapped(const char *needle)
{
    char *maps = tu_read_file("/proc/self/maps", NULL);
    bool found = maps && strstr(maps, needle) != NULL;
    free(maps);
    return found;
}

void tu_setenv(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0)
        die("setenv", name);
}

void tu_unsetenv(const char *name)
{
    if (unsetenv(name) != 0)
        die("unsetenv", name);
}

int tu_run(const char *const *argv, char **out, char **err)
{
    char *dir = tu_mkdtemp("run");
    char out_path[4200], err_path[4200];
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (out)
        *out = tu_read_file(out_path, NULL);
    if (err)
        *err = tu_read_file(err_path, NULL);
    tu_rm_rf(dir);
    free(dir);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int tu_run_subcommand(const char *cli, const char *command, const char *const *args, char **out, char **err)
{
    const char *argv[16] = {cli, command};
    size_t n = 2;
    for (; args[n - 2]; n++) {
        if (n + 1 >= sizeof argv / sizeof argv[0])
            fail_msg("%s %s: more arguments than tu_run_subcommand() takes", cli, command);
        argv[n] = args[n - 2];
    }
    argv[n] = NULL;
    return tu_run(argv, out, err);
}

void tu_expect_child_ok(int (*fn)(void), const char *file)
{
    fflush(NULL);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* a crash in the child must end the child, not return into
         * cmocka's handler and run the remaining tests a second time */
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        close(pipefd[0]);
        int line = fn();
        ssize_t w = write(pipefd[1], &line, sizeof line);
        _exit(w == (ssize_t)sizeof line ? 0 : 1);
    }
    close(pipefd[1]);
    int line = -1;
    ssize_t r = read(pipefd[0], &line, sizeof line);
    close(pipefd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status))
        fail_msg("child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(r, (ssize_t)sizeof line);
    if (line != 0)
        fail_msg("child check failed at %s:%d", file, line);
}

json_t *tu_session_json(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/session.json", dir);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        fail_msg("%s: %s", path, err.text);
    return j;
}

json_t *tu_crashed_session(const char *dir, int sig, json_t **crash)
{
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(session, "status"), "crashed");
    *crash = json_object_get(session, "crash");
    assert_non_null(*crash);
    assert_int_equal(tu_int(*crash, "signal"), sig);
    return session;
}

long long tu_int(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        fail_msg("field \"%s\" is missing or not an integer", key);
    return json_integer_value(v);
}

const char *tu_str(json_t *obj, const char *key)
{
    const char *v = json_string_value(json_object_get(obj, key));
    if (!v)
        fail_msg("field \"%s\" is missing or not a string", key);
    return v;
}

void tu_run_child(const char *name, const char *const *set, const char *const *unset)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 16, sizeof *envp);
    assert_non_null(envp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool drop = false;
        for (const char *const *u = unset; u && *u && !drop; u++)
            drop = !strncmp(environ[i], *u, strlen(*u)) && environ[i][strlen(*u)] == '=';
        for (const char *const *s = set; s && *s && !drop; s++)
            drop = !strncmp(environ[i], *s, (size_t)(strchr(*s, '=') - *s + 1));
        if (!drop)
            envp[m++] = environ[i];
    }
    for (const char *const *s = set; s && *s && m < n + 15; s++)
        envp[m++] = (char *)*s;
    envp[m] = NULL;
    char *argv[] = {program_invocation_name, "--child", (char *)name, NULL};
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    free(envp);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status))
        fail_msg("child %s died of signal %d", name, WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    if (WEXITSTATUS(status) != 0)
        fail_msg("child %s failed (exit %d)", name, WEXITSTATUS(status));
}
