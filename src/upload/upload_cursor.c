/*
 * The upload cursor file (upload_cursor.h).
 */
#include "upload/upload_cursor.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/regular_file.h"
#include "gpufl/gpufl.h"

#define CURSOR_FORMAT "gpufl-upload-cursor"

bool gpufl__cursor_load(const char *dir, const char *server, const char *session_id, gpufl__upload_cursor *c, char *why,
                        size_t why_len)
{
    memset(c, 0, sizeof *c);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, GPUFL__CURSOR_FILE);
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return true;
    json_error_t jerr;
    json_t *j = gpufl__json_load_regular(path, 0, &jerr);
    if (!j) {
        snprintf(why, why_len, "%s: %s (starting over from the first event)", path, jerr.text);
        return false;
    }
    const char *fmt = json_string_value(json_object_get(j, "format"));
    const char *srv = json_string_value(json_object_get(j, "server"));
    const char *sid = json_string_value(json_object_get(j, "session_id"));
    json_t *ev = json_object_get(j, "events");
    bool ok = fmt && !strcmp(fmt, CURSOR_FORMAT) && srv && sid && json_is_object(ev);
    gpufl__upload_cursor got = {0};
    for (uint8_t ch = 0; ok && ch < GFL_CHANNEL_COUNT; ch++) {
        json_t *n = json_object_get(ev, gpufl__channel_name(ch));
        ok = json_is_integer(n) && json_integer_value(n) >= 0;
        if (ok)
            got.acked[ch] = (uint64_t)json_integer_value(n);
    }
    got.complete = json_is_true(json_object_get(j, "complete"));
    if (!ok) {
        snprintf(why, why_len,
                 "%s: not an upload cursor (format, server, session_id or events missing or wrong); "
                 "starting over from the first event",
                 path);
    } else if (!strcmp(srv, server) && !strcmp(sid, session_id)) {
        *c = got; /* another server's or session's cursor is not this one's: zeros */
    }
    json_decref(j);
    return ok;
}

int gpufl__cursor_save(const char *dir, const char *server, const char *session_id, const gpufl__upload_cursor *c,
                       char *err, size_t err_len)
{
    char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, GPUFL__CURSOR_FILE);
    snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, GPUFL__CURSOR_FILE);
    json_t *ev = json_object();
    for (uint8_t ch = 0; ev && ch < GFL_CHANNEL_COUNT; ch++)
        json_object_set_new(ev, gpufl__channel_name(ch), json_integer((json_int_t)c->acked[ch]));
    json_t *j = json_pack("{s:s,s:i,s:s,s:s,s:o,s:b}", "format", CURSOR_FORMAT, "version", 1, "server", server,
                          "session_id", session_id, "events", ev, "complete", c->complete);
    char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) {
        snprintf(err, err_len, "%s: out of memory", path);
        return GPUFL_EIO;
    }
    /* O_NOFOLLOW: a link planted under the temporary name is not written through */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    size_t n = strlen(text);
    bool ok = fd >= 0 && write(fd, text, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    free(text);
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        snprintf(err, err_len, "cannot write the upload cursor %s: %s", path, strerror(e ? e : EIO));
        unlink(tmp);
        return GPUFL_EIO;
    }
    return 0;
}
