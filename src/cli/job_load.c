/*
 * Loading a job's ranks (job_load.h). Opening a rank's session is most of
 * the time (the digest is a pass over its kernels), so ranks are read on
 * LOAD_THREADS threads, each opening, digesting and closing one session at
 * a time: memory holds at most that many sessions, whatever the number of
 * ranks. gpufl_trace_open and the digest are safe on one trace per thread.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/job_load.h"
#include "gpufl/trace.h"
#include "read/job_find.h"

static int by_rank(const void *a, const void *b)
{
    const gpufl__job_rank *x = a, *y = b;
    if (x->rank != y->rank) /* ranks without a number last, in path order */
        return x->rank < 0 ? 1 : y->rank < 0 ? -1 : (x->rank > y->rank) - (x->rank < y->rank);
    return strcmp(x->path, y->path);
}

static int check_ranks(const char *cmd, const gpufl__job *j, int mixed_ok)
{
    for (size_t i = 1; i < j->n; i++) {
        const gpufl__job_rank *a = &j->ranks[i - 1], *b = &j->ranks[i];
        for (size_t k = 0; k < i; k++)
            if (!strcmp(j->ranks[k].session_id, b->session_id) && b->session_id[0]) {
                fprintf(stderr, "gpufl %s: %s and %s are the same session (%s)\n", cmd, j->ranks[k].path, b->path,
                        b->session_id);
                return GFL_EXIT_FAIL;
            }
        if (a->rank >= 0 && a->rank == b->rank) {
            fprintf(stderr, "gpufl %s: %s and %s are both rank %lld: give the sessions of one run of the job\n", cmd,
                    a->path, b->path, (long long)a->rank);
            return GFL_EXIT_FAIL;
        }
        if (!mixed_ok && strcmp(j->ranks[0].job_id, b->job_id) != 0) {
            fprintf(stderr,
                    "gpufl %s: %s is of job '%s' and %s of job '%s': these are not one job "
                    "(--mixed reads them together anyway)\n",
                    cmd, j->ranks[0].path, j->ranks[0].job_id, b->path, b->job_id);
            return GFL_EXIT_FAIL;
        }
    }
    return 0;
}

#define LOAD_THREADS 2

typedef struct loader {
    const gpufl__job_paths *found;
    gpufl__job_rank *ranks;
    char **err; /* per session: why it could not be read, NULL when it was */
    atomic_size_t next;
    atomic_bool failed; /* stop taking sessions */
} loader;

static void load_one(loader *l, size_t i)
{
    char err[1024];
    const char *path = l->found->path[i];
    gpufl_trace *t = NULL;
    bool ok = gpufl_trace_open(path, &t, err, sizeof err) == 0;
    if (ok) {
        ok = gpufl__job_rank_digest(t, path, &l->ranks[i]) == 0;
        gpufl_trace_close(t);
        if (!ok)
            snprintf(err, sizeof err, "out of memory reading %s", path);
    }
    if (!ok) {
        l->err[i] = strdup(err); /* NULL out of memory: the failure is still told, as such */
        atomic_store(&l->failed, true);
    }
}

static void *load_thread(void *arg)
{
    loader *l = arg;
    size_t i;
    while (!atomic_load(&l->failed) && (i = atomic_fetch_add(&l->next, 1)) < l->found->n)
        load_one(l, i);
    return NULL;
}

/* Every session digested into ranks[0..n), on up to LOAD_THREADS threads;
 * 0, or -1 having said on stderr why the first that failed did. */
static int load_all(const char *cmd, const gpufl__job_paths *found, gpufl__job_rank *ranks)
{
    loader l = {.found = found, .ranks = ranks, .err = calloc(found->n ? found->n : 1, sizeof(char *))};
    if (!l.err) {
        fprintf(stderr, "gpufl %s: out of memory\n", cmd);
        return -1;
    }
    atomic_init(&l.next, 0);
    atomic_init(&l.failed, false);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nthreads = cpus > 1 && found->n > 1 ? LOAD_THREADS : 1;
    pthread_t th[LOAD_THREADS];
    size_t started = 0;
    for (size_t k = 1; k < nthreads; k++) /* this thread is one of them */
        if (pthread_create(&th[started], NULL, load_thread, &l) == 0)
            started++;
    load_thread(&l);
    for (size_t k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    int rc = 0;
    for (size_t i = 0; i < found->n && rc == 0; i++)
        if (l.err[i]) {
            fprintf(stderr, "gpufl %s: %s\n", cmd, l.err[i]);
            rc = -1;
        }
    if (rc == 0 && atomic_load(&l.failed)) {
        fprintf(stderr, "gpufl %s: out of memory\n", cmd);
        rc = -1;
    }
    for (size_t i = 0; i < found->n; i++)
        free(l.err[i]);
    free(l.err);
    return rc;
}

int gpufl__job_load(const char *cmd, const char *const *paths, size_t n, int mixed_ok, gpufl__job *out)
{
    memset(out, 0, sizeof *out);
    char err[1024];
    gpufl__job_paths found;
    if (gpufl__job_find(paths, n, &found, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl %s: %s\n", cmd, err);
        return GFL_EXIT_FAIL;
    }
    if (!(out->ranks = calloc(found.n ? found.n : 1, sizeof *out->ranks))) {
        fprintf(stderr, "gpufl %s: out of memory\n", cmd);
        gpufl__job_paths_free(&found);
        return GFL_EXIT_FAIL;
    }
    out->n = found.n; /* a slot not reached stays zeroed, which gpufl__job_rank_free takes */
    int rc = load_all(cmd, &found, out->ranks);
    gpufl__job_paths_free(&found);
    if (rc != 0) {
        gpufl__job_free(out);
        return GFL_EXIT_FAIL;
    }
    qsort(out->ranks, out->n, sizeof *out->ranks, by_rank);
    if (check_ranks(cmd, out, mixed_ok) != 0) {
        gpufl__job_free(out);
        return GFL_EXIT_FAIL;
    }
    return 0;
}

void gpufl__job_free(gpufl__job *j)
{
    for (size_t i = 0; i < j->n; i++)
        gpufl__job_rank_free(&j->ranks[i]);
    free(j->ranks);
    memset(j, 0, sizeof *j);
}
