/*
 * Opening a source: which reader, and for a session directory which files
 * in which order (see event_source.h).
 */
#include "read/event_source.h"
#include "read/job_find.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/gflt_format.h"
#include "gpufl/gpufl.h"
#include "read/input.h"
#include "read/source_choice.h"

#define MAX_PARTS 100000

/* Whether the bytes start like a .gflt file (a file cut inside its header
 * counts: it is a .gflt file that a crash left empty). */
static bool looks_gflt(const uint8_t *p, size_t n, bool named_gflt)
{
    if (n == 0)
        return named_gflt;
    size_t m = n < GFLT_MAGIC_LEN ? n : GFLT_MAGIC_LEN;
    return memcmp(p, GFLT_MAGIC, m) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* What the input in is: a .gflt file (kept open in f->in), or one NDJSON
 * log (a file: by its path; memory: kept in f->in). */
static int resolve_input(gpufl__input *in, gpufl__session_files *f, char *err, size_t err_len)
{
    uint8_t head[GFLT_MAGIC_LEN];
    ssize_t r = gpufl__input_read(in, 0, head, sizeof head);
    if (r < 0) {
        snprintf(err, err_len, "cannot read %s: %s", in->name, strerror(errno));
        gpufl__input_close(in);
        return GPUFL_EIO;
    }
    snprintf(f->what, sizeof f->what, "%s", in->name);
    snprintf(f->read_files, sizeof f->read_files, "%s", base_name(in->name));
    snprintf(f->read_why, sizeof f->read_why, "%s", in->fd < 0 ? "bytes in memory" : "the file named, read alone");
    if (looks_gflt(head, (size_t)r, ends_with(in->name, ".gflt")) || in->fd < 0) {
        f->gflt = looks_gflt(head, (size_t)r, ends_with(in->name, ".gflt"));
        f->in = *in;
        f->has_input = true;
        return 0;
    }
    /* an NDJSON file: read by name */
    gpufl__input_close(in);
    if (!(f->paths = malloc(sizeof *f->paths)) || !(f->paths[0] = strdup(f->what))) {
        snprintf(err, err_len, "%s: out of memory", f->what);
        return GPUFL_ENOMEM;
    }
    f->npaths = 1;
    return 0;
}

/* ---- session directories -------------------------------------------------- */

typedef struct part {
    unsigned long n;
    char *path;
} part;

static int part_order(const void *a, const void *b)
{
    unsigned long x = ((const part *)a)->n, y = ((const part *)b)->n;
    return x < y ? -1 : x > y;
}

/* N when name is "<channel>.<N>.log", else 0. */
static unsigned long rotated_part(const char *name, const char *channel)
{
    size_t c = strlen(channel);
    if (strncmp(name, channel, c) != 0 || name[c] != '.')
        return 0;
    char *end;
    const char *digits = name + c + 1;
    if (*digits < '1' || *digits > '9')
        return 0;
    unsigned long n = strtoul(digits, &end, 10);
    return strcmp(end, ".log") == 0 ? n : 0;
}

typedef struct path_list {
    char **v;
    size_t n, cap;
} path_list;

static int add_path(path_list *l, const char *dir, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    size_t len = strlen(dir) + strlen(name) + 2;
    if (!(l->v[l->n] = malloc(len)))
        return GPUFL_ENOMEM;
    snprintf(l->v[l->n++], len, "%s/%s", dir, name);
    return 0;
}

/* The logs of one channel, oldest first: <channel>.1.log, .2.log, ...,
 * then <channel>.log. */
static int channel_paths(const char *dir, const char *channel, path_list *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return GPUFL_EIO;
    part *parts = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        unsigned long k = rotated_part(e->d_name, channel);
        if (!k)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            part *p = cap <= MAX_PARTS ? realloc(parts, cap * sizeof *p) : NULL;
            if (!p) {
                rc = GPUFL_ENOMEM;
                break;
            }
            parts = p;
        }
        parts[n].n = k;
        if (!(parts[n++].path = strdup(e->d_name)))
            rc = GPUFL_ENOMEM;
    }
    closedir(d);
    if (rc == 0 && n)
        qsort(parts, n, sizeof *parts, part_order);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && parts[i].path)
            rc = add_path(l, dir, parts[i].path);
        free(parts[i].path);
    }
    free(parts);
    char current[128];
    snprintf(current, sizeof current, "%s.log", channel);
    char full[4200];
    snprintf(full, sizeof full, "%s/%s", dir, current);
    struct stat st;
    if (rc == 0 && stat(full, &st) == 0)
        rc = add_path(l, dir, current);
    return rc;
}

/* "device.log, scope.1.log ... scope.log (12 parts), system.log" */
static void list_logs(const path_list *l, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->n && used < len; i++) {
        size_t j = i; /* the channel's parts run from i to j, newest last */
        const char *dot = strchr(base_name(l->v[i]), '.');
        size_t stem = dot ? (size_t)(dot - base_name(l->v[i])) + 1 : 0;
        while (j + 1 < l->n && strncmp(base_name(l->v[j + 1]), base_name(l->v[i]), stem) == 0)
            j++;
        int n = i == j ? snprintf(out + used, len - used, "%s%s", used ? ", " : "", base_name(l->v[i]))
                       : snprintf(out + used, len - used, "%s%s ... %s (%zu parts)", used ? ", " : "",
                                  base_name(l->v[i]), base_name(l->v[j]), j - i + 1);
        used += n > 0 ? (size_t)n : 0;
        i = j;
    }
}

static int resolve_directory(const char *dir, gpufl__session_files *f, char *err, size_t err_len)
{
    char gflt[4200];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", dir);
    snprintf(f->what, sizeof f->what, "%s", dir);
    struct stat st;
    bool has_gflt = stat(gflt, &st) == 0;
    path_list l = {0};
    int rc = 0;
    for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT && rc == 0; ch++)
        rc = channel_paths(dir, gpufl__channel_name(ch), &l);
    bool use_gflt = has_gflt;
    if (rc != 0) {
        snprintf(err, err_len, "cannot list %s: %s", dir, rc == GPUFL_ENOMEM ? "out of memory" : strerror(errno));
    } else if (has_gflt && l.n) {
        gpufl__source_choice c;
        gpufl__source_choose(gflt, (const char *const *)l.v, l.n, &c);
        use_gflt = c.gflt;
        f->copies = c.logs_partial ? 1 : 2; /* compact: the logs are not a second copy */
        snprintf(f->read_why, sizeof f->read_why, "%s", c.why);
    } else if (has_gflt) {
        snprintf(f->read_why, sizeof f->read_why, "the session's only copy (it has no NDJSON logs)");
    } else if (l.n) {
        snprintf(f->read_why, sizeof f->read_why, "the session's only copy (it has no trace.gflt)");
    } else {
        char dumps[4300];
        snprintf(dumps, sizeof dumps, "%s/dumps", dir);
        if (gpufl__job_is_dir(dir))
            snprintf(err, err_len,
                     "%s is a job directory, one session per rank: `gpufl report` and `gpufl export` read it "
                     "whole; for one rank, name its session (a subdirectory)",
                     dir);
        else if (stat(dumps, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(err, err_len,
                     "%s has no trace.gflt and no *.log files (recorded with log_format none?): its flight "
                     "window's dumps are sessions of their own, in %s",
                     dir, dumps);
        else
            snprintf(err, err_len,
                     "%s has no trace.gflt and no *.log files: not a gpufl session, or one recorded with "
                     "log_format none that wrote no dump",
                     dir);
        rc = GPUFL_ENOTFOUND;
    }
    if (rc == 0 && use_gflt) {
        for (size_t i = 0; i < l.n; i++)
            free(l.v[i]);
        free(l.v);
        snprintf(f->read_files, sizeof f->read_files, "trace.gflt");
        rc = gpufl__input_open_file(&f->in, gflt, err, err_len);
        f->gflt = f->has_input = rc == 0;
        return rc;
    }
    if (rc == 0)
        list_logs(&l, f->read_files, sizeof f->read_files);
    f->paths = l.v;
    f->npaths = l.n;
    return rc;
}

void gpufl__session_files_free(gpufl__session_files *f)
{
    for (size_t i = 0; i < f->npaths; i++)
        free(f->paths[i]);
    free(f->paths);
    if (f->has_input)
        gpufl__input_close(&f->in);
    memset(f, 0, sizeof *f);
}

int gpufl__session_files_open(const char *path, gpufl__session_files *f, char *err, size_t err_len)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        snprintf(err, err_len, "cannot open %s: %s", path ? path : "(null)", path ? strerror(errno) : "no path");
        return path && errno != ENOENT ? GPUFL_EIO : GPUFL_ENOTFOUND;
    }
    int rc;
    if (S_ISDIR(st.st_mode)) {
        rc = resolve_directory(path, f, err, err_len);
    } else {
        gpufl__input in;
        rc = gpufl__input_open_file(&in, path, err, err_len);
        if (rc == 0)
            rc = resolve_input(&in, f, err, err_len);
    }
    if (rc != 0)
        gpufl__session_files_free(f);
    return rc;
}

int gpufl__session_files_memory(const void *data, size_t n, const char *name, gpufl__session_files *f, char *err,
                                size_t err_len)
{
    memset(f, 0, sizeof *f);
    gpufl__input in;
    gpufl__input_memory(&in, data, n, name);
    return resolve_input(&in, f, err, err_len);
}

/* A source over what f names, taking over its input. */
static int open_files(gpufl__session_files *f, gpufl__event_source **out, char *err, size_t err_len)
{
    int rc;
    if (f->gflt) {
        f->has_input = false;
        rc = gpufl__gflt_source_open(&f->in, out, err, err_len);
    } else if (f->has_input) {
        f->has_input = false; /* memory: nothing to close */
        rc = gpufl__ndjson_source_open(NULL, 0, &f->in, f->what, out, err, err_len);
    } else {
        rc = gpufl__ndjson_source_open((const char *const *)f->paths, f->npaths, NULL, f->what, out, err, err_len);
    }
    if (rc == 0) {
        snprintf((*out)->read_files, sizeof(*out)->read_files, "%s", f->read_files);
        snprintf((*out)->read_why, sizeof(*out)->read_why, "%s", f->read_why);
        (*out)->copies = f->copies ? f->copies : 1;
    }
    gpufl__session_files_free(f);
    return rc;
}

int gpufl__source_open(const char *path, gpufl__event_source **out, char *err, size_t err_len)
{
    *out = NULL;
    gpufl__session_files f;
    int rc = gpufl__session_files_open(path, &f, err, err_len);
    return rc ? rc : open_files(&f, out, err, err_len);
}

int gpufl__source_open_memory(const void *data, size_t n, const char *name, gpufl__event_source **out, char *err,
                              size_t err_len)
{
    *out = NULL;
    gpufl__session_files f;
    int rc = gpufl__session_files_memory(data, n, name, &f, err, err_len);
    return rc ? rc : open_files(&f, out, err, err_len);
}
