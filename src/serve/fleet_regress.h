/*
 * `gpufl fleet regress`: the sessions of an app in two periods compared,
 * kernel by kernel and scope by scope, with the thresholds and the words
 * of `gpufl diff` (analyze/ana_diff.h): each session is one item, its
 * value the time the name took in it (0 when it did not run), so a
 * period is a distribution over its sessions; the change per session is
 * judged on the medians and their noise (gpufl__diff_judge_medians), and
 * a regression must also move the mean per session by at least the min
 * impact (of the baseline's kernel time or wall time per session).
 * With a step scope (--per-step NAME) each session's times are divided by
 * its instances of that scope first, so that runs of different lengths
 * compare: time per training step rather than per run.
 *
 * Threads: the caller's, with its own connection. Sizes: one row per
 * (session, name) of the two periods comes back from the database.
 */
#ifndef GPUFL_SERVE_FLEET_REGRESS_H
#define GPUFL_SERVE_FLEET_REGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libpq-fe.h>

#include "serve/fleet_query.h"

typedef struct gpufl__fleet_regress_opts {
    const char *before_text, *after_text; /* the periods as given, for the text */
    int64_t before_from, before_to, after_from, after_to;
    double threshold_pct, min_impact_pct; /* gpufl diff's defaults: 5 and 0.5 */
    const char *step;                     /* NULL: a session is the item; else the time per
                                             instance of this scope (a training step) in each
                                             session is, sessions without it left out */
    bool all;                             /* list the rows that did not change */
    bool json;
} gpufl__fleet_regress_opts;

/* Compares the sessions f selects (workspace, app, host, job; its times
 * are ignored) started in the two periods. 0 with *regressions;
 * GPUFL_ENOTFOUND when a period has no session (why names it); GPUFL_EIO
 * (database); GPUFL_ENOMEM. */
int gpufl__fleet_regress(PGconn *conn, const gpufl__fleet_filter *f, const gpufl__fleet_regress_opts *o, FILE *out,
                         unsigned *regressions, char *why, size_t why_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_FLEET_REGRESS_H */
