/*
 * Test helpers (see test_util.h).
 */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what, const char *path)
{
    fprintf(stderr, "test helper: %s '%s': %s\n", what, path, strerror(errno));
    abort();
}

char *tu_mkdtemp(const char *tag)
{
    char *path = malloc(256);
    snprintf(path, 256, "/tmp/gpufl-%s-XXXXXX", tag ? tag : "test");
    if (!mkdtemp(path))
        die("mkdtemp", path);
    return path;
}

void tu_rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rm_rf(child);
        else
            unlink(child);
    }
    closedir(d);
    rmdir(path);
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        die("write", path);
}

bool tu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
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
            fprintf(stderr, "%s: line %zu is not a JSON object with a type: %s\n  %.*s\n", path,
                    line_no, j ? "no type" : err.text, (int)(nl - p > 300 ? 300 : nl - p), p);
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
