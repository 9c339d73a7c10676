/*
 * Finding a job's sessions (job_find.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpufl/gpufl.h"
#include "read/job_find.h"

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_file(const char *dir, const char *name)
{
    char p[PATH_MAX];
    struct stat st;
    return snprintf(p, sizeof p, "%s/%s", dir, name) < (int)sizeof p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A session directory: what the recorder writes into one. */
static bool is_session_dir(const char *dir)
{
    return has_file(dir, "session.json") || has_file(dir, "trace.gflt") || has_file(dir, "device.log") ||
           has_file(dir, "scope.log") || has_file(dir, "system.log");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add(gpufl__job_paths *out, const char *path)
{
    char **q = realloc(out->path, (out->n + 1) * sizeof *q);
    if (!q)
        return GPUFL_ENOMEM;
    out->path = q;
    if (!(out->path[out->n] = strdup(path)))
        return GPUFL_ENOMEM;
    out->n++;
    return 0;
}

/* The session subdirectories of dir, sorted by name, appended to out. */
static int add_sessions_in(const char *dir, gpufl__job_paths *out, size_t *found)
{
    DIR *d = opendir(dir);
    if (!d)
        return GPUFL_ENOTFOUND;
    gpufl__job_paths mine = {0};
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
            continue;
        if (is_dir(p) && is_session_dir(p))
            rc = add(&mine, p);
    }
    closedir(d);
    if (mine.n)
        qsort(mine.path, mine.n, sizeof *mine.path, cmp_str);
    for (size_t i = 0; rc == 0 && i < mine.n; i++)
        rc = add(out, mine.path[i]);
    *found = mine.n;
    gpufl__job_paths_free(&mine);
    return rc;
}

bool gpufl__job_is_dir(const char *path)
{
    if (!is_dir(path) || is_session_dir(path))
        return false;
    gpufl__job_paths p = {0};
    size_t found = 0;
    bool yes = add_sessions_in(path, &p, &found) == 0 && found > 0;
    gpufl__job_paths_free(&p);
    return yes;
}

int gpufl__job_find(const char *const *paths, size_t n, gpufl__job_paths *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        int rc = 0;
        if (stat(paths[i], &st) != 0) {
            snprintf(err, err_len, "%s: %s", paths[i], strerror(errno));
            rc = GPUFL_ENOTFOUND;
        } else if (!S_ISDIR(st.st_mode) || is_session_dir(paths[i])) {
            rc = add(out, paths[i]);
        } else {
            size_t found = 0;
            rc = add_sessions_in(paths[i], out, &found);
            if (rc == 0 && found == 0) {
                snprintf(err, err_len,
                         "%s: neither a session nor a job directory (no subdirectory holds a session.json, "
                         "trace.gflt or channel logs)",
                         paths[i]);
                rc = GPUFL_ENOTFOUND;
            } else if (rc != 0) {
                snprintf(err, err_len, "%s: cannot list the directory: %s", paths[i], strerror(errno));
            }
        }
        if (rc != 0) {
            if (rc == GPUFL_ENOMEM)
                snprintf(err, err_len, "out of memory listing the sessions of %s", paths[i]);
            gpufl__job_paths_free(out);
            return rc;
        }
    }
    return 0;
}

void gpufl__job_paths_free(gpufl__job_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->path[i]);
    free(p->path);
    memset(p, 0, sizeof *p);
}
