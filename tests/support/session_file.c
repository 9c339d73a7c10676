/*
 * Session files for the tests (see session_file.h).
 */
#include "session_file.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <unistd.h>

#include "core/intern.h"
#include "core/os.h"
#include "read/event_source.h"
#include "sink/ndjson_export.h"

static int write_fd(void *ctx, const void *data, size_t n, bool final)
{
    (void) final;
    return gpufl__write_all(*(int *)ctx, data, n) == n ? 0 : GPUFL_EIO;
}

void tu_gflt_open(tu_gflt_file *f, const char *path, const gpufl__session_meta *meta, size_t chunk_events, int level)
{
    f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f->fd < 0)
        fail_msg("cannot create %s", path);
    gpufl__gflt_out out = {write_fd, &f->fd};
    assert_int_equal(gpufl__gflt_writer_open(&f->w, out, &gpufl__intern_lookup, meta, chunk_events, level), 0);
}

void tu_gflt_add(tu_gflt_file *f, const gfl_event *ev) { assert_int_equal(gpufl__gflt_writer_add(&f->w, ev), 0); }

void tu_gflt_close(tu_gflt_file *f, const gpufl__session_meta *meta)
{
    assert_int_equal(gpufl__gflt_writer_close(&f->w, meta), 0);
    assert_int_equal(close(f->fd), 0);
}

void tu_write_gflt_and_ndjson(const char *gflt_path, const char *ndjson_dir, const gfl_event *evs, size_t n,
                              const gpufl__session_meta *meta, size_t chunk_events, int level)
{
    tu_gflt_file f;
    tu_gflt_open(&f, gflt_path, meta, chunk_events, level);
    gpufl__ndjson_export e;
    char err[1024];
    if (gpufl__ndjson_export_open(&e, ndjson_dir, meta, &gpufl__intern_lookup, err, sizeof err) != 0)
        fail_msg("%s: %s", ndjson_dir, err);
    for (size_t i = 0; i < n; i++) {
        tu_gflt_add(&f, &evs[i]);
        assert_int_equal(gpufl__ndjson_export_event(&e, &evs[i]), 0);
    }
    tu_gflt_close(&f, meta);
    assert_int_equal(gpufl__ndjson_export_close(&e, meta, err, sizeof err), 0);
}

void tu_copy_session(const char *in, const char *out, tu_event_edit edit, void *ctx)
{
    gpufl__event_source *src;
    char err[1024];
    if (gpufl__source_open(in, &src, err, sizeof err) != 0)
        fail_msg("%s: %s", in, err);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        fail_msg("cannot create %s", out);
    gpufl__gflt_writer w;
    gpufl__gflt_out o = {write_fd, &fd};
    /* the source's string table grows as it reads: the writer looks names up as it meets them */
    assert_int_equal(gpufl__gflt_writer_open(&w, o, &src->strings, &src->meta, 0, -1), 0);
    const gfl_event *ev;
    int rc;
    while ((rc = gpufl__source_next(src, &ev)) == 1) {
        gfl_event copy = *ev;
        if (!edit || edit(ctx, &copy, &src->strings))
            assert_int_equal(gpufl__gflt_writer_add(&w, &copy), 0);
    }
    if (rc < 0)
        fail_msg("%s: %s", in, src->err);
    assert_int_equal(gpufl__gflt_writer_close(&w, &src->meta), 0);
    assert_int_equal(close(fd), 0);
    gpufl__source_close(src);
}

gpufl_trace *tu_trace_open(const char *path)
{
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    return t;
}
