/*
 * Source lines from the session's sources/ copy (see source_text.h).
 */
#include "read/source_text.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/regular_file.h"

#define MAX_FILES 64 /* files a cache keeps; more are read per line */

typedef struct file_text {
    char *path;
    gpufl__source_from from;
    char *data; /* NULL when there is no text */
    size_t len;
} file_text;

struct gpufl__source_cache {
    char dir[4096];
    json_t *index; /* NULL: the session has no sources/ (or it is unreadable) */
    bool has_index;
    file_text files[MAX_FILES];
    size_t n;
};

/* The session directory of `session`: itself when a directory, else the
 * directory holding it. */
static void session_dir(const char *session, char *buf, size_t len)
{
    struct stat st;
    if (stat(session, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "%s", session);
        return;
    }
    const char *slash = strrchr(session, '/');
    if (!slash)
        snprintf(buf, len, ".");
    else if (slash == session)
        snprintf(buf, len, "/");
    else
        snprintf(buf, len, "%.*s", (int)(slash - session), session);
}

gpufl__source_cache *gpufl__source_cache_new(const char *session)
{
    gpufl__source_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    session_dir(session && session[0] ? session : ".", c->dir, sizeof c->dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/sources/index.json", c->dir);
    struct stat st;
    c->has_index = !(lstat(path, &st) != 0 && errno == ENOENT);
    if (c->has_index) {
        json_error_t jerr;
        c->index = gpufl__json_load_regular(path, 0, &jerr);
    }
    return c;
}

void gpufl__source_cache_free(gpufl__source_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->files[i].path);
        free(c->files[i].data);
    }
    json_decref(c->index);
    free(c);
}

/* All of the regular file at path (at most GPUFL__SOURCE_READ_MAX bytes). */
static bool slurp(const char *path, char **data, size_t *len)
{
    char why[128];
    int fd = gpufl__open_regular(path, why, sizeof why);
    struct stat st;
    if (fd < 0)
        return false;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size > GPUFL__SOURCE_READ_MAX) {
        close(fd);
        return false;
    }
    char *b = NULL;
    size_t n = 0;
    int rc = gpufl__read_fd_all(fd, (size_t)st.st_size, &b, &n);
    close(fd);
    if (rc != 0 || n != (size_t)st.st_size) { /* out of memory, an error, or it changed */
        free(b);
        return false;
    }
    *data = b;
    *len = n;
    return true;
}

/* The index's entry for file, or NULL. */
static json_t *entry_of(json_t *index, const char *file)
{
    json_t *files = json_object_get(index, "files"), *e;
    size_t i;
    json_array_foreach(files, i, e)
    {
        const char *p = json_string_value(json_object_get(e, "path"));
        if (p && !strcmp(p, file))
            return e;
    }
    return NULL;
}

/* A stored name the writer could have made: no '/', not hidden. */
static bool safe_name(const char *name) { return name && name[0] && name[0] != '.' && !strchr(name, '/'); }

static bool unchanged(const char *file, json_t *e)
{
    json_t *size = json_object_get(e, "size"), *mtime = json_object_get(e, "mtime_ns");
    struct stat st;
    if (!json_is_integer(size) || !json_is_integer(mtime) || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    json_int_t ns = (json_int_t)st.st_mtim.tv_sec * 1000000000 + (json_int_t)st.st_mtim.tv_nsec;
    return json_integer_value(size) == (json_int_t)st.st_size && json_integer_value(mtime) == ns;
}

/* file's text and where it came from, per the rules in source_text.h */
static void load(const gpufl__source_cache *c, const char *file, file_text *f)
{
    f->from = GPUFL__SOURCE_NONE;
    if (!c->has_index) {
        if (slurp(file, &f->data, &f->len))
            f->from = GPUFL__SOURCE_NOW;
        return;
    }
    json_t *e = c->index ? entry_of(c->index, file) : NULL;
    if (!e)
        return;
    const char *stored = json_string_value(json_object_get(e, "stored"));
    if (safe_name(stored)) {
        char path[4400];
        snprintf(path, sizeof path, "%s/sources/%s", c->dir, stored);
        if (slurp(path, &f->data, &f->len)) {
            f->from = GPUFL__SOURCE_COPY;
            return;
        }
    }
    if (unchanged(file, e) && slurp(file, &f->data, &f->len))
        f->from = GPUFL__SOURCE_UNCHANGED;
}

/* Line `line` of data into buf. */
static bool line_of(const char *data, size_t len, uint32_t line, char *buf, size_t buf_len)
{
    const char *p = data, *end = data + len;
    for (uint32_t at = 1; at < line; at++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return false;
        p = nl + 1;
    }
    if (p == end)
        return false;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n && p[n - 1] == '\r')
        n--;
    if (n > buf_len - 1)
        n = buf_len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return true;
}

gpufl__source_from gpufl__source_cache_line(gpufl__source_cache *c, const char *file, uint32_t line, char *buf,
                                            size_t len)
{
    if (!buf || !len)
        return GPUFL__SOURCE_NONE;
    buf[0] = '\0';
    if (!c || !file || !file[0] || !line)
        return GPUFL__SOURCE_NONE;
    file_text *f = NULL, one = {0};
    for (size_t i = 0; i < c->n && !f; i++)
        if (!strcmp(c->files[i].path, file))
            f = &c->files[i];
    if (!f) {
        f = c->n < MAX_FILES ? &c->files[c->n] : &one;
        *f = (file_text){0};
        f->path = strdup(file);
        if (!f->path)
            return GPUFL__SOURCE_NONE;
        load(c, file, f);
        if (f != &one)
            c->n++;
    }
    gpufl__source_from from = f->data && line_of(f->data, f->len, line, buf, len) ? f->from : GPUFL__SOURCE_NONE;
    if (f == &one) {
        free(one.path);
        free(one.data);
    }
    return from;
}

gpufl__source_from gpufl__source_line_text(const char *session, const char *file, uint32_t line, char *buf, size_t len)
{
    gpufl__source_cache *c = gpufl__source_cache_new(session);
    gpufl__source_from from = gpufl__source_cache_line(c, file, line, buf, len);
    gpufl__source_cache_free(c);
    return from;
}
