/*
 * session.json of a converted session (see convert_session.h).
 *
 * The source's session.json is the better one: only the recording process
 * knew its options, host and devices. It is taken when the source is a
 * session directory, or a file beside the session.json of the same session
 * (`gpufl convert run/trace.gflt out`). A lone .gflt or .log has none, so
 * one is rebuilt from what the events carry: identity, start and end from
 * the session_start / session_end records (the .gflt meta and end chunks),
 * and the summary from the events themselves, read back from the new
 * directory as `gpufl summary` reads a session that did not end cleanly
 * (summary_recorded.h). options, host_info, devices and clock_source are
 * then absent rather than guessed.
 *
 * Runs once, on the command's thread.
 */
#include "cli/convert_session.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/summary_recorded.h"
#include "collect/session_json.h"
#include "collect/summary_json.h"
#include "core/regular_file.h"
#include "core/session_info.h"
#include "core/utf8.h"
#include "gpufl/gpufl.h"

/* The session.json of in's session, or NULL when there is none of the
 * same session_id (or it does not parse: then the rebuilt one serves). */
static json_t *source_session_json(const char *in, const gpufl__session_meta *meta)
{
    char path[PATH_MAX + 32];
    struct stat st;
    if (stat(in, &st) != 0)
        return NULL;
    if (S_ISDIR(st.st_mode)) {
        snprintf(path, sizeof path, "%s/session.json", in);
    } else {
        const char *slash = strrchr(in, '/');
        if (slash)
            snprintf(path, sizeof path, "%.*s/session.json", (int)(slash - in), in);
        else
            snprintf(path, sizeof path, "session.json");
    }
    json_error_t jerr;
    json_t *j = gpufl__json_load_regular(path, 0, &jerr);
    const char *format = json_string_value(json_object_get(j, "format"));
    const char *id = json_string_value(json_object_get(j, "session_id"));
    if (!json_is_object(j) || !format || strcmp(format, "gpufl-session") != 0 || !id ||
        strcmp(id, meta->session_id) != 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* session.json from meta and the events in out_dir (absolute). NULL with a
 * message in err. */
static json_t *rebuilt_session_json(const char *out_dir, const gpufl__session_meta *meta, char *err, size_t err_len)
{
    gpufl__summary s;
    memset(&s, 0, sizeof s);
    s.session_id = strdup(meta->session_id);
    s.app_name = strdup(meta->app_name);
    s.host = strdup(meta->host);
    s.dir = strdup(out_dir);
    s.status = strdup(meta->ended ? "ended" : "running");
    s.pid = (int)meta->pid;
    s.start_ns = meta->start_ns;
    s.start_wall_ns = meta->start_wall_ns;
    s.end_ns = meta->ended ? meta->end_ns : meta->start_ns;
    json_t *root = NULL;
    if (!s.session_id || !s.app_name || !s.host || !s.dir || !s.status) {
        snprintf(err, err_len, "%s: out of memory", out_dir);
        goto out;
    }
    if (gpufl__summary_from_recorded(out_dir, &s, err, err_len) != 0)
        goto out;
    char start[40];
    gpufl__iso_time(meta->start_wall_ns, start, sizeof start);
    /* names and paths need not be UTF-8: U+FFFD in place of bad bytes, as
     * the recorder writes them (core/utf8.h) */
    root = json_pack("{s:s,s:i,s:o,s:o,s:o,s:I,s:o,s:o,s:I,s:I,s:s,s:s}", "format", "gpufl-session", "format_version",
                     GFL_FORMAT_VERSION, "gpufl_version", gpufl__json_text(meta->gpufl_version), "session_id",
                     gpufl__json_text(meta->session_id), "app_name", gpufl__json_text(meta->app_name), "pid",
                     (json_int_t)meta->pid, "host", gpufl__json_text(meta->host), "log_dir", gpufl__json_text(out_dir),
                     "start_ns", (json_int_t)meta->start_ns, "start_wall_ns", (json_int_t)meta->start_wall_ns,
                     "start_time", start, "status", s.status);
    if (root && meta->ended) {
        char end[40];
        gpufl__iso_time(meta->end_wall_ns, end, sizeof end);
        json_object_set_new(root, "end_ns", json_integer((json_int_t)meta->end_ns));
        json_object_set_new(root, "end_wall_ns", json_integer((json_int_t)meta->end_wall_ns));
        json_object_set_new(root, "end_time", json_string(end));
    }
    if (root)
        json_object_set_new(root, "summary", gpufl__summary_to_json(&s));
    if (!root)
        snprintf(err, err_len, "%s: out of memory", out_dir);
out:
    gpufl__summary_free(&s);
    return root;
}

int gpufl__convert_session_json(const char *in, const char *out_dir, const gpufl__session_meta *meta, char *err,
                                size_t err_len)
{
    char dir[PATH_MAX], from[PATH_MAX];
    if (!realpath(out_dir, dir)) {
        snprintf(err, err_len, "%s: %s", out_dir, strerror(errno));
        return GPUFL_EIO;
    }
    if (!realpath(in, from))
        snprintf(from, sizeof from, "%s", in);
    json_t *root = source_session_json(in, meta);
    if (root)
        json_object_set_new(root, "log_dir", gpufl__json_text(dir));
    else if (!(root = rebuilt_session_json(dir, meta, err, err_len)))
        return GPUFL_EIO;
    json_object_set_new(root, "converted_from", gpufl__json_text(from));
    /* whole or not at all, as the recorder writes it */
    char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/session.json", dir);
    snprintf(tmp, sizeof tmp, "%s/.session.json.tmp", dir);
    int rc = json_dump_file(root, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0 || rename(tmp, path) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        unlink(tmp);
        return GPUFL_EIO;
    }
    return 0;
}
