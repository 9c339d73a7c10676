/*
 * `gpufl convert IN OUT`: a session between NDJSON and .gflt, event for
 * event. IN is a session directory, an NDJSON log or a .gflt file; OUT is a
 * .gflt file (a name ending in .gflt) or a directory to create with
 * device.log, scope.log, system.log and session.json (convert_session.h).
 * Reader and writer are the library's own (src/read, src/sink), so the
 * result is what a live session with that log_format would have written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/convert_session.h"
#include "core/os.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "sink/gflt_writer.h"
#include "sink/ndjson_export.h"

typedef struct file_out {
    int fd;
    int err; /* errno of the first failed write */
} file_out;

static int write_file(void *ctx, const void *data, size_t n, bool final)
{
    (void) final;
    file_out *f = ctx;
    if (gpufl__write_all(f->fd, data, n) != n) {
        f->err = errno ? errno : EIO;
        return GPUFL_EIO;
    }
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Every event of src into out as .gflt; returns events written or -1. */
static long long to_gflt(gpufl__event_source *src, const char *out, int level, bool force)
{
    file_out f = {open(out, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644), 0};
    if (f.fd < 0) {
        fprintf(stderr, "gpufl convert: cannot create %s: %s%s\n", out, strerror(errno),
                errno == EEXIST ? " (--force replaces it)" : "");
        return -1;
    }
    gpufl__gflt_writer w;
    gpufl__gflt_out o = {write_file, &f};
    long long n = 0;
    int rc = gpufl__gflt_writer_open(&w, o, &src->strings, &src->meta, 0, level);
    if (rc != 0) {
        fprintf(stderr, "gpufl convert: cannot write %s: %s\n", out,
                rc == GPUFL_ENOMEM ? "out of memory" : strerror(f.err));
        close(f.fd);
        unlink(out);
        return -1;
    }
    const gfl_event *ev;
    int wrc = 0;
    while ((rc = gpufl__source_next(src, &ev)) == 1) {
        if ((wrc = gpufl__gflt_writer_add(&w, ev)) != 0)
            break;
        n++;
    }
    if (rc < 0)
        fprintf(stderr, "gpufl convert: %s\n", src->err);
    else if (wrc != 0)
        fprintf(stderr, "gpufl convert: cannot write %s: %s\n", out,
                wrc == GPUFL_EINVAL ? "an event of a type .gflt cannot hold" : strerror(f.err));
    /* the end of the session as read (complete now that it was all read) */
    int crc = gpufl__gflt_writer_close(&w, &src->meta);
    if (close(f.fd) != 0 && crc == 0) {
        f.err = errno;
        crc = GPUFL_EIO;
    }
    if (rc >= 0 && wrc == 0 && crc != 0)
        fprintf(stderr, "gpufl convert: cannot write %s: %s\n", out, strerror(f.err));
    if (rc < 0 || wrc != 0 || crc != 0) {
        unlink(out); /* never leave a half-written output behind */
        return -1;
    }
    return n;
}

/* Every event of src (read from in) into the directory out, with a
 * session.json; returns events written or -1. */
static long long to_ndjson(gpufl__event_source *src, const char *in, const char *out)
{
    gpufl__ndjson_export e;
    char err[1024];
    if (gpufl__ndjson_export_open(&e, out, &src->meta, &src->strings, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl convert: %s\n", err);
        return -1;
    }
    const gfl_event *ev;
    long long n = 0;
    int rc, wrc = 0;
    while ((rc = gpufl__source_next(src, &ev)) == 1) {
        if ((wrc = gpufl__ndjson_export_event(&e, ev)) != 0)
            break;
        n++;
    }
    if (rc < 0)
        fprintf(stderr, "gpufl convert: %s\n", src->err);
    else if (wrc != 0)
        fprintf(stderr, "gpufl convert: cannot write the logs in %s: %s\n", out,
                wrc == GPUFL_ENOMEM ? "out of memory" : strerror(errno));
    int crc = gpufl__ndjson_export_close(&e, &src->meta, err, sizeof err);
    if (rc >= 0 && wrc == 0 && crc != 0)
        fprintf(stderr, "gpufl convert: %s\n", err);
    if (rc < 0 || wrc != 0 || crc != 0)
        return -1;
    /* the readers that start from session.json need one too */
    if (gpufl__convert_session_json(in, out, &src->meta, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl convert: %s\n", err);
        return -1;
    }
    return n;
}

int gpufl_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int level = -1;
    bool force = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--force")) {
            force = true;
        } else if (!strcmp(argv[i], "--level") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || v > 19) {
                return gpufl__cli_usage_error("convert", "--level takes 0 (no compression) to 19");
            }
            level = (int)v;
        } else if (argv[i][0] == '-') {
            return gpufl__cli_usage_error("convert", "unknown option, or one without its value: '%s'", argv[i]);
        } else if (in && out) {
            return gpufl__cli_usage_error("convert", "one IN and one OUT only ('%s' is a third)", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            out = argv[i];
        }
    }
    if (!in || !out)
        return gpufl__cli_usage_error("convert", "%s", !in ? "which IN and OUT?" : "which OUT?");
    gpufl__event_source *src;
    char err[1024];
    if (gpufl__source_open(in, &src, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl convert: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_read("convert", src->read_files, src->read_why, src->copies);
    bool gflt = ends_with(out, ".gflt");
    long long n = gflt ? to_gflt(src, out, level, force) : to_ndjson(src, in, out);
    if (n >= 0) {
        fprintf(stderr, "gpufl convert: %lld events from %s to %s", n, in, out);
        if (src->skipped_bytes || src->skipped_records)
            fprintf(stderr, " (skipped: %llu bytes of a torn tail, %llu records of unknown types)",
                    (unsigned long long)src->skipped_bytes, (unsigned long long)src->skipped_records);
        fprintf(stderr, "\n");
    }
    gpufl__source_close(src);
    return n >= 0 ? GFL_EXIT_OK : GFL_EXIT_FAIL;
}
