/*
 * A recorded program for tests/metrics_listen_prometheus.py: records
 * `step` scopes (each with a nested `forward`) exactly argv[1] times, says
 * "ready" on stdout, and keeps the session (and its metrics endpoint,
 * GPUFL_METRICS_LISTEN) open until stdin closes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpufl/gpufl.h"

int main(int argc, char **argv)
{
    long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "metrics_target";
    if (!gpufl_init(&o)) {
        fprintf(stderr, "metrics_target: gpufl_init failed\n");
        return 1;
    }
    for (long i = 0; i < steps; i++) {
        gpufl_scope step = gpufl_scope_begin("step");
        gpufl_scope fwd = gpufl_scope_begin("forward");
        gpufl_scope_end(fwd);
        gpufl_scope_end(step);
    }
    printf("ready\n");
    fflush(stdout);
    while (getchar() != EOF)
        ;
    gpufl_shutdown();
    return 0;
}
