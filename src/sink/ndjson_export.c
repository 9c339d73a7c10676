/*
 * NDJSON logs from events read back (see ndjson_export.h).
 */
#include "sink/ndjson_export.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/ndjson_format.h"
#include "gpufl/gpufl.h"
#include "sink/disk_budget.h"
#include "sink/ndjson_meta.h"

static bool empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)) != NULL)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

static int put_line(gpufl__ndjson_export *e, unsigned ch, const char *line, size_t n)
{
    if (fwrite(line, 1, n, e->files[ch]) != n)
        return GPUFL_EIO;
    e->lines[ch]++;
    return 0;
}

static void close_all(gpufl__ndjson_export *e)
{
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        if (e->files[ch])
            fclose(e->files[ch]);
    free(e->buf);
    gpufl__jnames_free(&e->jnames);
    memset(e, 0, sizeof *e);
}

int gpufl__ndjson_export_open(gpufl__ndjson_export *e, const char *dir, const gpufl__session_meta *meta,
                              const gpufl__string_lookup *names, char *err, size_t err_len)
{
    memset(e, 0, sizeof *e);
    e->names = names;
    gpufl__jnames_init(&e->jnames, names);
    snprintf(e->dir, sizeof e->dir, "%s", dir);
    if (mkdir(dir, 0755) != 0 && !(errno == EEXIST && empty_dir(dir))) {
        snprintf(err, err_len, "cannot create the directory %s: %s", dir,
                 errno == EEXIST ? "it exists and is not empty" : strerror(errno));
        return GPUFL_EIO;
    }
    char line[GFL_NDJSON_META_BOUND];
    for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.log", dir, gpufl__channel_name(ch));
        e->files[ch] = fopen(path, "we");
        size_t n = gpufl__ndjson_session_start(line, meta, gpufl__channel_name(ch), 0);
        if (!e->files[ch] || put_line(e, ch, line, n) != 0) {
            snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
            close_all(e);
            return GPUFL_EIO;
        }
    }
    return 0;
}

int gpufl__ndjson_export_event(gpufl__ndjson_export *e, const gfl_event *ev)
{
    size_t bound = gpufl__ndjson_line_bound(ev, &e->jnames);
    if (bound > e->cap) {
        char *b = realloc(e->buf, bound);
        if (!b)
            return GPUFL_ENOMEM;
        e->buf = b;
        e->cap = bound;
    }
    size_t n = gpufl__ndjson_line(ev, &e->jnames, e->buf);
    return put_line(e, gpufl__event_route(ev), e->buf, n);
}

int gpufl__ndjson_export_close(gpufl__ndjson_export *e, const gpufl__session_meta *meta, char *err, size_t err_len)
{
    char line[GFL_NDJSON_META_BOUND];
    int rc = 0;
    for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT && rc == 0; ch++) {
        /* session_end counts the lines before it, log_stopped excluded, as
         * the live writer does */
        uint64_t lines = e->lines[ch];
        size_t n;
        if (meta->stop_reason) {
            n = gpufl__ndjson_log_stopped(line, meta->stopped_at_ns,
                                          gpufl__stop_reason_name((gpufl__stop_reason)meta->stop_reason),
                                          meta->stop_detail);
            if (fwrite(line, 1, n, e->files[ch]) != n)
                rc = GPUFL_EIO;
        }
        if (rc == 0 && meta->ended) {
            n = gpufl__ndjson_session_end(line, meta, meta->end_ns, meta->end_wall_ns, lines, meta->lost[ch],
                                          meta->has_dropped[ch] ? meta->dropped[ch] : NULL);
            if (fwrite(line, 1, n, e->files[ch]) != n)
                rc = GPUFL_EIO;
        }
        if (fflush(e->files[ch]) != 0)
            rc = GPUFL_EIO;
    }
    if (rc != 0)
        snprintf(err, err_len, "cannot write the logs in %s: %s", e->dir, strerror(errno));
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        if (e->files[ch] && fclose(e->files[ch]) != 0 && rc == 0) {
            snprintf(err, err_len, "cannot write the logs in %s: %s", e->dir, strerror(errno));
            rc = GPUFL_EIO;
        }
        e->files[ch] = NULL;
    }
    close_all(e);
    return rc;
}
