/*
 * `gpufl replay-check JOB_A JOB_B`: two runs of a distributed job checked
 * rank by rank (replay_check.h). Each rank's sessions are found as every
 * reader of a job finds them (read/job_find.h), paired by the rank their
 * session.json records (by name order when a side's ranks are not all
 * known), and checked one pair at a time, so memory holds two sessions at
 * most. A rank that only one run has is a difference.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/replay_check.h"
#include "read/job_find.h"
#include "read/session_json_path.h"

typedef struct ranked {
    const char *path;
    long long rank; /* -1 unknown */
    size_t order;   /* place in name order */
} ranked;

typedef struct side {
    gpufl__job_paths found;
    ranked *r;
    size_t n;
    bool all_ranked;
} side;

static long long rank_of(const char *session)
{
    char file[4200];
    gpufl__session_json_of(session, file, sizeof file);
    json_error_t e;
    json_t *root = json_load_file(file, 0, &e);
    json_t *rank = json_object_get(json_object_get(root, "job"), "rank");
    long long v = json_is_integer(rank) && json_integer_value(rank) >= 0 ? (long long)json_integer_value(rank) : -1;
    json_decref(root);
    return v;
}

static int by_rank(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < 0 ? 1 : b->rank < 0 ? -1 : (a->rank > b->rank) - (a->rank < b->rank);
    return (a->order > b->order) - (a->order < b->order);
}

/* The sessions of job directory path with their ranks. 0 or -1 (said). */
static int load(const char *label, const char *path, side *s)
{
    char err[1024];
    if (gpufl__job_find(&path, 1, &s->found, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl replay-check: %s: %s\n", label, err);
        return -1;
    }
    if (!(s->r = calloc(s->found.n + 1, sizeof *s->r))) {
        fprintf(stderr, "gpufl replay-check: out of memory\n");
        return -1;
    }
    s->n = s->found.n;
    s->all_ranked = true;
    for (size_t i = 0; i < s->n; i++) {
        s->r[i] = (ranked){.path = s->found.path[i], .rank = rank_of(s->found.path[i]), .order = i};
        s->all_ranked &= s->r[i].rank >= 0;
    }
    if (s->all_ranked)
        qsort(s->r, s->n, sizeof *s->r, by_rank);
    for (size_t i = 1; s->all_ranked && i < s->n; i++)
        if (s->r[i].rank == s->r[i - 1].rank) {
            fprintf(stderr, "gpufl replay-check: %s: %s and %s are both rank %lld: give one run of the job\n", label,
                    s->r[i - 1].path, s->r[i].path, s->r[i].rank);
            return -1;
        }
    return 0;
}

static void side_free(side *s)
{
    free(s->r);
    gpufl__job_paths_free(&s->found);
}

static int worse(int x, int y)
{
    if (x == RC_EXIT_TROUBLE || y == RC_EXIT_TROUBLE)
        return RC_EXIT_TROUBLE;
    return x == RC_EXIT_DIFFERENT || y == RC_EXIT_DIFFERENT ? RC_EXIT_DIFFERENT : RC_EXIT_SAME;
}

/* One pair (either side may be NULL: a rank one run lacks). */
static int one_rank(long long rank, const ranked *a, const ranked *b, const gpufl__rc_args *args, json_t *ranks)
{
    int status;
    json_t *check = NULL;
    if (!args->json) {
        if (rank >= 0)
            printf("== rank %lld\n", rank);
        else
            printf("== session %zu (ranks unknown: paired in name order)\n", (a ? a : b)->order + 1);
    }
    if (a && b) {
        status = gpufl__rc_check_pair(a->path, b->path, args, args->json ? &check : NULL);
    } else {
        status = RC_EXIT_DIFFERENT;
        if (!args->json)
            printf("DIFFERENT: only %s has this rank (%s)\n", a ? "A" : "B", (a ? a : b)->path);
    }
    if (!args->json) {
        putchar('\n');
        return status;
    }
    json_t *o = json_object();
    if (!o || json_object_set_new(o, "rank", rank >= 0 ? json_integer(rank) : json_null()) ||
        json_object_set_new(o, "a", a ? json_string(a->path) : json_null()) ||
        json_object_set_new(o, "b", b ? json_string(b->path) : json_null()) ||
        json_object_set_new(o, "same", json_boolean(status == RC_EXIT_SAME)) ||
        json_object_set_new(o, "check", check ? check : json_null()) || json_array_append_new(ranks, o)) {
        fprintf(stderr, "gpufl replay-check: out of memory writing JSON\n");
        return RC_EXIT_TROUBLE;
    }
    return status;
}

int gpufl__rc_check_jobs(const char *pa, const char *pb, const gpufl__rc_args *args)
{
    side a = {0}, b = {0};
    int status = RC_EXIT_TROUBLE;
    json_t *ranks = json_array();
    size_t differ = 0, compared = 0;
    if (!ranks || load("A", pa, &a) != 0 || load("B", pb, &b) != 0)
        goto done;
    bool by_number = a.all_ranked && b.all_ranked;
    status = RC_EXIT_SAME;
    for (size_t i = 0, j = 0; i < a.n || j < b.n;) {
        const ranked *x = i < a.n ? &a.r[i] : NULL, *y = j < b.n ? &b.r[j] : NULL;
        if (by_number && x && y && x->rank != y->rank) {
            if (x->rank < y->rank)
                y = NULL;
            else
                x = NULL;
        }
        i += x != NULL;
        j += y != NULL;
        int s = one_rank(by_number ? (x ? x : y)->rank : -1, x, y, args, ranks);
        compared++;
        differ += s != RC_EXIT_SAME;
        status = worse(status, s);
    }
    if (args->json) {
        json_t *root = json_object();
        if (!root || json_object_set_new(root, "job", json_true()) || json_object_set_new(root, "a", json_string(pa)) ||
            json_object_set_new(root, "b", json_string(pb)) ||
            json_object_set_new(root, "same", json_boolean(status == RC_EXIT_SAME)) ||
            json_object_set_new(root, "paired_by", json_string(by_number ? "rank" : "name_order")) ||
            json_object_set(root, "ranks", ranks) || gpufl__rc_print_json(root) != 0)
            status = RC_EXIT_TROUBLE;
        json_decref(root);
    } else if (status != RC_EXIT_TROUBLE) {
        printf("JOB %s: %zu of %zu rank%s differ%s\n", status == RC_EXIT_SAME ? "SAME" : "DIFFERENT", differ, compared,
               compared == 1 ? "" : "s", differ == 1 ? "s" : "");
    }
done:
    json_decref(ranks);
    side_free(&a);
    side_free(&b);
    return status;
}
