/*
 * Loading a job's ranks (ana_job_load.h).
 */
#include "analyze/ana_job_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_job_digest_file.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "read/job_find.h"

static int by_rank(const void *a, const void *b)
{
    const gpufl__job_rank *x = a, *y = b;
    if (x->rank != y->rank) /* ranks without a number last, in path order */
        return x->rank < 0 ? 1 : y->rank < 0 ? -1 : (x->rank > y->rank) - (x->rank < y->rank);
    return strcmp(x->path, y->path);
}

static int check_ranks(const gpufl__job *j, bool mixed_ok, char *err, size_t err_len)
{
    for (size_t i = 1; i < j->n; i++) {
        const gpufl__job_rank *a = &j->ranks[i - 1], *b = &j->ranks[i];
        for (size_t k = 0; k < i; k++)
            if (!strcmp(j->ranks[k].session_id, b->session_id) && b->session_id[0]) {
                snprintf(err, err_len, "%s and %s are the same session (%s)", j->ranks[k].path, b->path, b->session_id);
                return GPUFL_EINVAL;
            }
        if (a->rank >= 0 && a->rank == b->rank) {
            snprintf(err, err_len, "%s and %s are both rank %lld: give the sessions of one run of the job", a->path,
                     b->path, (long long)a->rank);
            return GPUFL_EINVAL;
        }
        if (!mixed_ok && strcmp(j->ranks[0].job_id, b->job_id) != 0) {
            snprintf(err, err_len,
                     "%s is of job '%s' and %s of job '%s': these are not one job "
                     "(--mixed reads them together anyway)",
                     j->ranks[0].path, j->ranks[0].job_id, b->path, b->job_id);
            return GPUFL_EINVAL;
        }
    }
    return 0;
}

/* The job directory's kept digests (ana_job_digest_file.h) when they are
 * of exactly the sessions found there, none changed since; else false,
 * saying why through note when there was a digest file to use. */
static bool from_digest(const char *dir, const gpufl__job_paths *found, gpufl__job_note_fn *note, void *note_ctx,
                        gpufl__job *out)
{
    char err[1024], msg[1200];
    gpufl__job_rank *r = NULL;
    size_t n = 0;
    if (!gpufl__job_digest_read(dir, &r, &n, err, sizeof err)) {
        if (err[0] && note) {
            snprintf(msg, sizeof msg, "%s; reading the sessions", err);
            note(note_ctx, msg);
        }
        return false;
    }
    bool same = n == found->n;
    for (size_t i = 0; same && i < n; i++) {
        bool there = false;
        for (size_t k = 0; k < found->n && !there; k++)
            there = !strcmp(r[i].path, found->path[k]);
        same = there;
    }
    if (!same) {
        if (note) {
            snprintf(msg, sizeof msg, "%s/job.digest is not of the sessions there now; reading the sessions", dir);
            note(note_ctx, msg);
        }
        for (size_t i = 0; i < n; i++)
            gpufl__job_rank_free(&r[i]);
        free(r);
        return false;
    }
    out->ranks = r;
    out->n = n;
    return true;
}

int gpufl__job_load(const char *const *paths, size_t n, bool mixed_ok, gpufl__job_note_fn *note, void *note_ctx,
                    gpufl__job *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    int rc = GPUFL_EINVAL;
    gpufl__job_paths found;
    if (gpufl__job_find(paths, n, &found, err, err_len) != 0)
        return GPUFL_EINVAL;
    if (n == 1 && from_digest(paths[0], &found, note, note_ctx, out)) {
        gpufl__job_paths_free(&found);
        goto loaded;
    }
    if (!(out->ranks = calloc(found.n, sizeof *out->ranks))) {
        snprintf(err, err_len, "out of memory");
        gpufl__job_paths_free(&found);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < found.n; i++) {
        gpufl_trace *t = NULL;
        if (gpufl_trace_open(found.path[i], &t, err, err_len) != 0)
            goto fail;
        int digested = gpufl__job_rank_digest(t, found.path[i], &out->ranks[out->n]);
        out->n++;
        gpufl_trace_close(t);
        if (digested != 0) {
            snprintf(err, err_len, "out of memory reading %s", found.path[i]);
            rc = GPUFL_ENOMEM;
            goto fail;
        }
    }
    gpufl__job_paths_free(&found);
loaded:
    qsort(out->ranks, out->n, sizeof *out->ranks, by_rank);
    if (check_ranks(out, mixed_ok, err, err_len) != 0) {
        gpufl__job_free(out);
        return GPUFL_EINVAL;
    }
    return 0;
fail:
    gpufl__job_paths_free(&found);
    gpufl__job_free(out);
    return rc;
}

void gpufl__job_free(gpufl__job *j)
{
    for (size_t i = 0; i < j->n; i++)
        gpufl__job_rank_free(&j->ranks[i]);
    free(j->ranks);
    memset(j, 0, sizeof *j);
}
