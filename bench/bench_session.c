/*
 * The benchmarks' synthetic session (see bench_session.h).
 */
#include "bench_session.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/intern.h"
#include "core/os.h"

#ifndef GFL_SOURCE_DIR
#define GFL_SOURCE_DIR "."
#endif

static void die(const char *bench, const char *what, const char *path)
{
    fprintf(stderr, "%s: %s%s%s\n", bench, what, path ? " " : "", path ? path : "");
    exit(1);
}

void bench_session_meta(gpufl__session_meta *meta, const char *session_id, const char *bench)
{
    *meta = (gpufl__session_meta){.session_id = session_id,
                                  .app_name = bench,
                                  .host = "bench",
                                  .gpufl_version = "0.1.0",
                                  .pid = 1,
                                  .start_ns = 1000000000000ull,
                                  .start_wall_ns = 1795000000000000000ull,
                                  .format_version = 1,
                                  .stop_detail = ""};
}

void bench_session_end(gpufl__session_meta *meta, uint64_t last_ts)
{
    meta->ended = true;
    meta->end_ns = last_ts + 1000;
    meta->end_wall_ns = meta->start_wall_ns + (meta->end_ns - meta->start_ns);
}

trace_gen *bench_gen_open(const char *bench)
{
    char err[1024];
    trace_gen *g;
    if (trace_gen_open(GFL_SOURCE_DIR "/bench/data/kernel_mix.json", 1, &g, err, sizeof err) != 0)
        die(bench, err, NULL);
    return g;
}

static int write_fd(void *ctx, const void *data, size_t n, bool final)
{
    (void) final;
    return gpufl__write_all(*(int *)ctx, data, n) == n ? 0 : GPUFL_EIO;
}

void bench_gflt_open(bench_gflt_file *f, const char *path, const gpufl__session_meta *meta)
{
    f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    gpufl__gflt_out o = {write_fd, &f->fd};
    if (f->fd < 0 || gpufl__gflt_writer_open(&f->w, o, &gpufl__intern_lookup, meta, 0, -1) != 0)
        die(meta->app_name, "cannot write", path);
}

void bench_gflt_close(bench_gflt_file *f, const gpufl__session_meta *meta)
{
    if (gpufl__gflt_writer_close(&f->w, meta) != 0 || close(f->fd) != 0)
        die(meta->app_name, "writing a .gflt file failed", NULL);
}

void bench_write_session(const char *path, uint64_t events, const char *session_id, const char *bench)
{
    trace_gen *g = bench_gen_open(bench);
    gpufl__session_meta meta;
    bench_session_meta(&meta, session_id, bench);
    bench_gflt_file f;
    bench_gflt_open(&f, path, &meta);
    uint64_t last = 0;
    for (uint64_t i = 0; i < events; i++) {
        gfl_event ev;
        trace_gen_next(g, &ev);
        if (ev.h.ts > last)
            last = ev.h.ts;
        if (gpufl__gflt_writer_add(&f.w, &ev) != 0)
            die(bench, "writing the session failed", NULL);
    }
    bench_session_end(&meta, last);
    bench_gflt_close(&f, &meta);
    trace_gen_close(g);
}
