/*
 * File helpers shared by the tests and the benchmarks (see fs_util.h).
 */
#include "fs_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what, const char *path)
{
    fprintf(stderr, "fs_util: %s '%s': %s\n", what, path, strerror(errno));
    abort();
}

char *tu_mkdtemp_in(const char *base, const char *tag)
{
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/gpufl-%s-XXXXXX", base && base[0] ? base : "/tmp", tag ? tag : "test");
    if (!mkdtemp(path))
        die("mkdtemp", path);
    return path;
}

char *tu_mkdtemp(const char *tag) { return tu_mkdtemp_in("/tmp", tag); }

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
