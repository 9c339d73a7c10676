/*
 * Dumps of the flight window (see window_dump.h).
 */
#include "sink/window_dump.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/intern.h"
#include "core/log.h"
#include "core/os.h"
#include "format/gflt_format.h"
#include "gpufl/gpufl.h"
#include "sink/gflt_writer.h"
#include "sink/session_sinks.h"

typedef struct file_out {
    int fd;
} file_out;

static int file_write(void *ctx, const void *data, size_t n, bool final)
{
    (void) final;
    file_out *f = ctx;
    return gpufl__write_all(f->fd, data, n) == n ? 0 : GPUFL_EIO;
}

/* Removes dir and the plain files in it (a dump holds nothing else). */
static void remove_dump_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            (void)unlink(path);
        }
        closedir(d);
    }
    (void)rmdir(dir);
}

static int write_trace(const char *dir, const gpufl__session_info *info, const gpufl__window_snapshot *snap,
                       const gpufl__dump_note *note, char *err, size_t err_len)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    file_out f = {gpufl__os->open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (f.fd < 0) {
        snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
        return GPUFL_EIO;
    }
    gpufl__session_meta meta;
    gpufl__session_meta_of(info, &meta);
    gpufl__gflt_writer w;
    /* a writer that only copies chunks: no events of its own, no zstd */
    int rc = gpufl__gflt_writer_open(&w, (gpufl__gflt_out){file_write, &f}, &gpufl__intern_lookup, &meta, 1, 0);
    bool opened = rc == 0;
    for (size_t i = 0; rc == 0 && i < snap->n; i++) {
        const gpufl__window_chunk *c = snap->chunks[i];
        gpufl__gflt_index_entry e = {0, c->type, c->count, c->min_ts, c->max_ts};
        rc = gpufl__gflt_writer_put_chunk(&w, c->data, c->n, &e);
    }
    if (opened) {
        meta.ended = true; /* the dump ends where the trigger fired */
        meta.end_ns = note->at_ns;
        meta.end_wall_ns = info->start_wall_ns + (note->at_ns - info->start_ns);
        if (gpufl__gflt_writer_close(&w, &meta) != 0 && rc == 0)
            rc = GPUFL_EIO;
    }
    if (rc == 0 && gpufl__os->fdatasync(f.fd) != 0)
        rc = GPUFL_EIO;
    int saved = errno;
    gpufl__os->close(f.fd);
    if (rc != 0)
        snprintf(err, err_len, "cannot write %s: %s", path, rc == GPUFL_ENOMEM ? "out of memory" : strerror(saved));
    return rc;
}

int gpufl__window_dump_write(const gpufl__session_info *info, const gpufl__window_snapshot *snap,
                             const gpufl__dump_note *note, const gpufl__dump_addition *extra, char *path,
                             size_t path_len, char *err, size_t err_len)
{
    char dumps[4200], tmp[4400], final_dir[4400];
    snprintf(dumps, sizeof dumps, "%s/dumps", info->dir);
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s", dumps, note->name);
    snprintf(final_dir, sizeof final_dir, "%s/%s", dumps, note->name);
    if (gpufl__mkdir_p(dumps) != 0) {
        snprintf(err, err_len, "cannot create %s: %s", dumps, strerror(errno));
        return GPUFL_EIO;
    }
    remove_dump_dir(tmp);
    if (mkdir(tmp, 0755) != 0) {
        snprintf(err, err_len, "cannot create %s: %s", tmp, strerror(errno));
        return GPUFL_EIO;
    }
    int rc = write_trace(tmp, info, snap, note, err, err_len);
    gpufl__dump_note whole = *note;
    if (rc == 0 && extra && extra->add)
        whole.oom = extra->add(extra->ctx, tmp, note);
    if (rc == 0 && gpufl__session_json_write_dump(info, tmp, &whole) != 0) {
        snprintf(err, err_len, "cannot write %s/session.json: %s", tmp, strerror(errno));
        rc = GPUFL_EIO;
    }
    if (rc == 0 && rename(tmp, final_dir) != 0) {
        snprintf(err, err_len, "cannot rename %s to %s: %s", tmp, final_dir, strerror(errno));
        rc = GPUFL_EIO;
    }
    if (rc != 0) {
        remove_dump_dir(tmp);
        return rc;
    }
    if (path)
        snprintf(path, path_len, "%s", final_dir);
    return 0;
}

/* ---- pruning ------------------------------------------------------------ */

typedef struct dump_entry {
    char name[256];
    uint64_t bytes;
} dump_entry;

static uint64_t dir_bytes(const char *dir)
{
    uint64_t total = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    char path[4400];
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    closedir(d);
    return total;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const dump_entry *)a)->name, ((const dump_entry *)b)->name);
}

unsigned gpufl__window_dumps_prune(const gpufl__session_info *info, uint32_t max_count, uint64_t max_bytes)
{
    char dumps[4200], path[4400];
    snprintf(dumps, sizeof dumps, "%s/dumps", info->dir);
    DIR *d = opendir(dumps);
    if (!d)
        return 0;
    dump_entry *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dumps, e->d_name);
        if (!strncmp(e->d_name, ".tmp-", 5) || !strncmp(e->d_name, ".del-", 5)) {
            remove_dump_dir(path); /* a dump interrupted being written, or being removed */
            continue;
        }
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof v->name)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            dump_entry *p = realloc(v, ncap * sizeof *p);
            if (!p)
                break;
            v = p;
            cap = ncap;
        }
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        v[n].bytes = dir_bytes(path);
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof *v, by_name);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].bytes;
    unsigned removed = 0;
    for (size_t i = 0; i + 1 < n && (n - i > max_count || total > max_bytes); i++) {
        /* hidden first, then emptied: a process killed in between leaves a
         * hidden leftover, never a dump without its files */
        char hidden[4400];
        snprintf(path, sizeof path, "%s/%s", dumps, v[i].name);
        snprintf(hidden, sizeof hidden, "%s/.del-%s", dumps, v[i].name);
        remove_dump_dir(rename(path, hidden) == 0 ? hidden : path);
        total -= v[i].bytes;
        removed++;
    }
    free(v);
    return removed;
}
