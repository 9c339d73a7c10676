/*
 * Finding the sessions of an upload (upload_find.h), over read/job_find.h's
 * notion of a session and of a directory of sessions.
 */
#include "upload/upload_find.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/regular_file.h"
#include "gpufl/gpufl.h"

/* A run: one session, or the sessions of one job directory. */
typedef struct run {
    gpufl__job_paths s;
    int64_t newest; /* ns: the latest start of its sessions */
} run;

typedef struct runs {
    run *r;
    size_t n;
} runs;

static void runs_free(runs *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        gpufl__job_paths_free(&rs->r[i].s);
    free(rs->r);
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_file(const char *dir, const char *name)
{
    char p[PATH_MAX];
    struct stat st;
    return snprintf(p, sizeof p, "%s/%s", dir, name) < (int)sizeof p && stat(p, &st) == 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

/* A directory of sessions that are one job's ranks. */
static bool is_job_dir(const char *dir)
{
    return gpufl__job_is_dir(dir) && (!strncmp(base_name(dir), "job-", 4) || has_file(dir, "job.json"));
}

/* A session directory itself (not one holding sessions). */
static bool is_session_dir(const char *dir)
{
    const char *one[] = {dir};
    char err[256];
    gpufl__job_paths s;
    if (gpufl__job_find(one, 1, &s, err, sizeof err) != 0)
        return false;
    bool yes = s.n == 1 && !strcmp(s.path[0], dir);
    gpufl__job_paths_free(&s);
    return yes;
}

/* session.json's session_id (into id) and start; the directory's name and
 * modification time where it has none. */
static int64_t session_start(const char *dir, char *id, size_t id_len)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/session.json", dir);
    json_error_t jerr;
    json_t *j = gpufl__json_load_regular(p, 0, &jerr);
    const char *sid = json_string_value(json_object_get(j, "session_id"));
    json_t *w = json_object_get(j, "start_wall_ns");
    snprintf(id, id_len, "%s", sid ? sid : base_name(dir));
    int64_t t = json_is_integer(w) ? (int64_t)json_integer_value(w) : INT64_MIN;
    json_decref(j);
    struct stat st;
    if (t == INT64_MIN && stat(dir, &st) == 0)
        t = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return t;
}

/* The sessions of dir (a session or a job directory) as one run; false when
 * it is neither. */
static int add_run(runs *rs, const char *dir, bool *added)
{
    *added = false;
    const char *one[] = {dir};
    char err[256];
    gpufl__job_paths s;
    if (gpufl__job_find(one, 1, &s, err, sizeof err) != 0)
        return 0; /* not a session: something else that lives in a log_path */
    run *r = realloc(rs->r, (rs->n + 1) * sizeof *r);
    if (!r) {
        gpufl__job_paths_free(&s);
        return GPUFL_ENOMEM;
    }
    rs->r = r;
    r = &rs->r[rs->n++];
    r->s = s;
    r->newest = INT64_MIN;
    char id[256];
    for (size_t i = 0; i < s.n; i++) {
        int64_t t = session_start(s.path[i], id, sizeof id);
        if (t > r->newest)
            r->newest = t;
    }
    *added = true;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The runs of a log_path: each session and each directory of sessions in
 * it, in name order. */
static int list_runs(const char *path, runs *rs, char *err, size_t err_len)
{
    DIR *d = opendir(path);
    if (!d) {
        snprintf(err, err_len, "%s: cannot list the directory: %s", path, strerror(errno));
        return GPUFL_ENOTFOUND;
    }
    gpufl__job_paths subs = {0};
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        char p[PATH_MAX];
        if (e->d_name[0] == '.' || snprintf(p, sizeof p, "%s/%s", path, e->d_name) >= (int)sizeof p || !is_dir(p))
            continue;
        char **q = realloc(subs.path, (subs.n + 1) * sizeof *q);
        if (!q || !(q[subs.n] = strdup(p))) {
            if (q)
                subs.path = q;
            rc = GPUFL_ENOMEM;
            break;
        }
        subs.path = q;
        subs.n++;
    }
    closedir(d);
    if (subs.n)
        qsort(subs.path, subs.n, sizeof *subs.path, cmp_str);
    for (size_t i = 0; rc == 0 && i < subs.n; i++) {
        bool added;
        rc = add_run(rs, subs.path[i], &added);
    }
    gpufl__job_paths_free(&subs);
    if (rc != 0)
        snprintf(err, err_len, "out of memory listing the sessions of %s", path);
    return rc;
}

static int take(gpufl__job_paths *out, const char *p)
{
    char **q = realloc(out->path, (out->n + 1) * sizeof *q);
    if (!q)
        return GPUFL_ENOMEM;
    out->path = q;
    if (!(q[out->n] = strdup(p)))
        return GPUFL_ENOMEM;
    out->n++;
    return 0;
}

int gpufl__upload_find(const char *path, const char *session_id, bool all, gpufl__job_paths *out, char *err,
                       size_t err_len)
{
    if (!is_dir(path)) {
        snprintf(err, err_len, "%s: %s", path,
                 access(path, F_OK) == 0 ? "not a directory: give the session's directory (its session.json "
                                           "is sent with its events)"
                                         : strerror(errno));
        return GPUFL_ENOTFOUND;
    }
    runs rs = {0};
    int rc = 0;
    bool added = false;
    if (is_session_dir(path) || is_job_dir(path)) {
        rc = add_run(&rs, path, &added); /* a session, or a job: one run */
        if (rc == 0 && !added) {
            snprintf(err, err_len,
                     "%s: no session here (a session directory holds session.json, trace.gflt or channel logs)", path);
            rc = GPUFL_ENOTFOUND;
        }
    } else {
        rc = list_runs(path, &rs, err, err_len);
    }
    if (rc == 0 && rs.n == 0) {
        snprintf(err, err_len, "%s: no session under this directory", path);
        rc = GPUFL_ENOTFOUND;
    }
    size_t newest = 0, before = out->n;
    for (size_t i = 1; rc == 0 && i < rs.n; i++)
        if (rs.r[i].newest > rs.r[newest].newest)
            newest = i;
    for (size_t i = 0; rc == 0 && i < rs.n; i++) {
        for (size_t k = 0; rc == 0 && k < rs.r[i].s.n; k++) {
            const char *dir = rs.r[i].s.path[k];
            char id[256];
            session_start(dir, id, sizeof id);
            bool want = session_id && session_id[0] ? !strcmp(id, session_id) : (all || i == newest);
            if (want && (rc = take(out, dir)) != 0)
                snprintf(err, err_len, "out of memory listing the sessions of %s", path);
        }
    }
    if (rc == 0 && out->n == before) {
        snprintf(err, err_len, "%s: no session of id %s here", path, session_id);
        rc = GPUFL_ENOTFOUND;
    }
    runs_free(&rs);
    return rc;
}
