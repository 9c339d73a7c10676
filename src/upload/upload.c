/*
 * gpufl_upload_logs() (gpufl.h, docs/UPLOAD.md): the options with their
 * defaults and environment, the sessions the paths name, one session
 * after another, and the result.
 *
 * Runs on the caller's thread, never while this process records: an
 * upload reads whole sessions and waits on the network for minutes, and
 * nothing of that may share a recording's time.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/options.h"
#include "core/recording.h"
#include "read/job_find.h"
#include "upload/upload.h"
#include "upload/upload_find.h"

GPUFL_API void gpufl_upload_options_init(gpufl_upload_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->total_timeout_ms = 300000;
    o->connect_timeout_ms = 10000;
    o->read_timeout_ms = 30000;
    o->max_retries = 8;
    o->retry_delay_ms = 500;
    o->batch_events = 10000;
    o->batch_bytes = 4u << 20;
}

void gpufl__upload_warn(gpufl__upload *u, const char *fmt, ...)
{
    char msg[GPUFL_UPLOAD_WARNING_LEN * 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (u->res.warning_count < GPUFL_UPLOAD_WARNINGS_KEPT)
        snprintf(u->res.warnings[u->res.warning_count], GPUFL_UPLOAD_WARNING_LEN, "%s", msg);
    u->res.warning_count++;
    if (u->o.on_warning)
        u->o.on_warning(msg, u->o.on_warning_arg);
}

void gpufl__upload_fail(gpufl__upload *u, int rc, const char *fmt, ...)
{
    char msg[sizeof u->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!u->rc) {
        u->rc = rc;
        snprintf(u->err, sizeof u->err, "%s", msg);
    }
    /* every failure is also a warning, so that a caller of several sessions
     * sees each one's */
    gpufl__upload_warn(u, "%s", msg);
}

static const char *pick(const char *given, const char *env, const char *def)
{
    if (given && given[0])
        return given;
    const char *e = env ? getenv(env) : NULL;
    return e && e[0] ? e : def;
}

/* u->o from opts (NULL: defaults) and the environment; checks them.
 * Returns 0 or GPUFL_EINVAL with the reason in u->err. */
static int resolve(gpufl__upload *u, const gpufl_upload_options *opts)
{
    gpufl_upload_options d;
    gpufl_upload_options_init(&d);
    if (opts && opts->struct_size == 0) {
        snprintf(u->err, sizeof u->err,
                 "gpufl_upload_logs: options were not set up with gpufl_upload_options_init() (struct_size is 0)");
        return GPUFL_EINVAL;
    }
    if (opts)
        memcpy(&d, opts, opts->struct_size < sizeof d ? opts->struct_size : sizeof d);
    d.struct_size = sizeof d;
    u->o = d;
    gpufl_upload_options *o = &u->o;
    o->log_path = pick(d.log_path, "GPUFL_LOG_PATH", "gpufl");
    o->backend_url = pick(d.backend_url, "GPUFL_BACKEND_URL", "");
    o->api_key = pick(d.api_key, "GPUFL_API_KEY", "");
    o->api_path = pick(d.api_path, "GPUFL_API_PATH", "/api/v1");
    o->ca_file = d.ca_file && d.ca_file[0] ? d.ca_file : NULL;
    o->session_id = d.session_id && d.session_id[0] ? d.session_id : NULL;
    if (!o->batch_events)
        o->batch_events = 1;
    /* the server takes 64 MiB decompressed at most (docs/UPLOAD.md) */
    if (!o->batch_bytes || o->batch_bytes > (32u << 20))
        o->batch_bytes = o->batch_bytes ? 32u << 20 : 1;
    if (o->retry_delay_ms > 30000)
        o->retry_delay_ms = 30000;
    const char *url = o->backend_url;
    if (!url[0]) {
        snprintf(u->err, sizeof u->err,
                 "gpufl_upload_logs: no backend_url (the option, or GPUFL_BACKEND_URL): where should the sessions go?");
        return GPUFL_EINVAL;
    }
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        /* the URL is printed without a userinfo part that may hold a password */
        const char *at = strchr(url, '@');
        snprintf(u->err, sizeof u->err, "gpufl_upload_logs: backend_url '%.200s' is not http:// or https://",
                 at ? at + 1 : url);
        return GPUFL_EINVAL;
    }
    if (!o->api_key[0]) {
        snprintf(u->err, sizeof u->err,
                 "gpufl_upload_logs: no api_key (the option, or GPUFL_API_KEY): the server takes nothing without one");
        return GPUFL_EINVAL;
    }
    for (const char *c = o->api_key; *c; c++)
        if ((unsigned char)*c < 0x21 || *c == 0x7f) {
            snprintf(u->err, sizeof u->err,
                     "gpufl_upload_logs: the api_key holds a space or control character (a line read with its "
                     "newline?); it is not printed");
            return GPUFL_EINVAL;
        }
    if (o->api_path[0] != '/') {
        snprintf(u->err, sizeof u->err, "gpufl_upload_logs: api_path '%.200s' does not begin with '/'", o->api_path);
        return GPUFL_EINVAL;
    }
    size_t ul = strlen(url), pl = strlen(o->api_path);
    while (ul && url[ul - 1] == '/')
        ul--;
    while (pl > 1 && o->api_path[pl - 1] == '/')
        pl--;
    if (pl == 1)
        pl = 0;
    if (ul + pl >= sizeof u->server) {
        snprintf(u->err, sizeof u->err, "gpufl_upload_logs: backend_url and api_path are too long");
        return GPUFL_EINVAL;
    }
    snprintf(u->server, sizeof u->server, "%.*s%.*s", (int)ul, url, (int)pl, o->api_path);
    size_t n = strlen(o->api_key) + 32;
    if (!(u->auth_header = malloc(n))) {
        snprintf(u->err, sizeof u->err, "gpufl_upload_logs: out of memory");
        return GPUFL_ENOMEM;
    }
    snprintf(u->auth_header, n, "Authorization: Bearer %s", o->api_key);
    return 0;
}

/* The caller's result gets the fields its struct_size covers. */
static void hand_out(const gpufl__upload *u, gpufl_upload_result *result)
{
    if (!result || result->struct_size < offsetof(gpufl_upload_result, success) + sizeof(bool))
        return;
    size_t n = result->struct_size < sizeof u->res ? result->struct_size : sizeof u->res;
    memcpy((char *)result + sizeof(size_t), (const char *)&u->res + sizeof(size_t), n - sizeof(size_t));
}

static int run(gpufl__upload *u, const char *const *paths, size_t npaths)
{
    gpufl__job_paths dirs = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < npaths; i++) {
        char err[1024];
        if ((rc = gpufl__upload_find(paths[i], u->o.session_id, u->o.all_sessions, &dirs, err, sizeof err)) != 0)
            gpufl__upload_fail(u, rc, "%s", err);
    }
    if (rc == 0) {
        gpufl__http_config cfg = {.ca_file = u->o.ca_file,
                                  .connect_timeout_ms = u->o.connect_timeout_ms,
                                  .read_timeout_ms = u->o.read_timeout_ms};
        char err[512];
        if ((rc = gpufl__http_open(&cfg, &u->http, err, sizeof err)) != 0)
            gpufl__upload_fail(u, rc, "%s", err);
    }
    for (size_t i = 0; rc == 0 && i < dirs.n && !u->stop_all; i++) {
        if (gpufl__upload_session(u, dirs.path[i]) == 0)
            u->res.sessions_processed++;
        else
            u->res.sessions_failed++;
    }
    gpufl__http_close(u->http);
    gpufl__job_paths_free(&dirs);
    return u->rc;
}

int gpufl__upload_paths(const gpufl_upload_options *opts, const char *const *paths, size_t npaths,
                        gpufl_upload_result *result)
{
    gpufl__upload *u = calloc(1, sizeof *u);
    if (!u) {
        gpufl__set_error("gpufl_upload_logs: out of memory");
        return GPUFL_ENOMEM;
    }
    uint64_t t0 = gpufl__upload_now_ns();
    u->res.struct_size = sizeof u->res;
    int rc = 0;
    if (gpufl__env_disabled()) {
        u->res.success = true; /* GPUFL_DISABLED: nothing is sent, and that is no failure */
    } else if (gpufl__is_recording()) {
        snprintf(u->err, sizeof u->err,
                 "gpufl_upload_logs: a session is recording in this process; upload after gpufl_shutdown()");
        rc = GPUFL_ESTATE;
    } else if ((rc = resolve(u, opts)) == 0) {
        if (u->o.total_timeout_ms)
            u->deadline_ns = t0 + (uint64_t)u->o.total_timeout_ms * 1000000u;
        const char *one[] = {u->o.log_path};
        rc = run(u, npaths ? paths : one, npaths ? npaths : 1);
        u->res.success = rc == 0;
    }
    if (rc != 0)
        gpufl__set_error("%s", u->err);
    else
        gpufl__clear_error();
    u->res.elapsed_ms = (gpufl__upload_now_ns() - t0) / 1000000u;
    hand_out(u, result);
    if (u->auth_header) {
        /* the key does not outlive the call in this process's heap */
        volatile char *p = u->auth_header;
        while (*p)
            *p++ = 0;
        free(u->auth_header);
    }
    gpufl__bytebuf_free(&u->gz);
    free(u);
    return rc;
}

GPUFL_API int gpufl_upload_logs(const gpufl_upload_options *opts, gpufl_upload_result *result)
{
    return gpufl__upload_paths(opts, NULL, 0, result);
}
