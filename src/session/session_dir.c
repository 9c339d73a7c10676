/*
 * Session directories (see session_dir.h).
 */
#include "session/session_dir.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/job.h"
#include "core/run_env.h"
#include "core/os.h"

/* Room kept under PATH_MAX for what goes inside a session directory: the
 * longest name is a rotated log ("/device.4294967295.log") or a file being
 * replaced ("/session.json.tmp"). */
#define FILE_NAME_ROOM 32

/* Letters, digits, '.', '_' and '-' only; never empty, never starting with
 * '.', at most 64 characters: safe as a file name anywhere. */
static void sanitize_component(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < len && n < 64; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, len, "gpufl");
    else if (out[0] == '.')
        out[0] = '_';
}

static uint64_t random64(void)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    /* No entropy yet (early boot): still different per process and call;
     * the exclusive mkdir and its retries keep names unique. */
    uint64_t x = gpufl__mono_ns() ^ gpufl__wall_ns() ^ (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

/* Whether root can hold a session directory named like id with its files:
 * no component longer than NAME_MAX, and the whole path (made absolute, as
 * it is recorded) under PATH_MAX. Checked before anything is created,
 * because mkdir -p of a path that fails half-way leaves directories behind. */
static int check_root(const char *root, size_t id_len, char *err, size_t err_len)
{
    size_t len = strlen(root);
    if (len >= PATH_MAX) {
        snprintf(err, err_len, "log_path is %zu bytes long, more than a path can be (PATH_MAX %d)", len, PATH_MAX);
        return -1;
    }
    for (const char *p = root; *p;) {
        size_t n = strcspn(p, "/");
        if (n > NAME_MAX) {
            snprintf(err, err_len,
                     "log_path has a component of %zu bytes, more than a file name can be "
                     "(NAME_MAX %d): '%.*s'",
                     n, NAME_MAX, (int)(p - root + 64), root);
            return -1;
        }
        p += n;
        p += *p == '/';
    }
    size_t base = 0;
    char cwd[PATH_MAX];
    if (root[0] != '/' && getcwd(cwd, sizeof cwd))
        base = strlen(cwd) + 1;
    if (base + len + 1 + id_len + FILE_NAME_ROOM >= PATH_MAX) {
        snprintf(err, err_len,
                 "log_path is too long (%zu bytes): with the session directory and its files "
                 "inside, paths would exceed PATH_MAX (%d)",
                 len, PATH_MAX);
        return -1;
    }
    return 0;
}

int gpufl__session_dir_make(gpufl__session_info *info, const gpufl_options *o, char *err, size_t err_len)
{
    char app[80];
    sanitize_component(o->app_name, app, sizeof app);
    const char *root = o->log_path[0] ? o->log_path : app;
    /* `gpufl run` keeps a job's sessions together: every rank, whichever
     * host, under <log_path>/job-<id> */
    char job_root[PATH_MAX];
    if (info->job.id[0] && getenv(GPUFL_RUN_REPORT_ENV)) {
        char name[80];
        gpufl__job_dir_name(info->job.id, name, sizeof name);
        if (snprintf(job_root, sizeof job_root, "%s/%s", root, name) < (int)sizeof job_root)
            root = job_root;
    }
    time_t secs = (time_t)(info->start_wall_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    /* the longest id: every random digit there */
    int id_len = snprintf(info->id, sizeof info->id, "%s-%s-%d-%016llx", app, stamp, info->pid, ~0ull);
    if (check_root(root, (size_t)id_len, err, err_len) != 0)
        return -1;
    if (gpufl__mkdir_p(root) != 0) {
        snprintf(err, err_len, "cannot create the log directory '%s': %s", root, strerror(errno));
        return -1;
    }
    for (int attempt = 0; attempt < 16; attempt++) {
        snprintf(info->id, sizeof info->id, "%s-%s-%d-%016llx", app, stamp, info->pid, (unsigned long long)random64());
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", root, info->id); /* fits: check_root */
        if (gpufl__os->mkdir(dir, 0755) == 0) {
            char *real = realpath(dir, NULL);
            int n = snprintf(info->dir, sizeof info->dir, "%s", real ? real : dir);
            free(real);
            if (n >= (int)sizeof info->dir) {
                snprintf(err, err_len, "the session directory path is too long: '%s'", dir);
                return -1;
            }
            return 0;
        }
        if (errno != EEXIST) {
            snprintf(err, err_len, "cannot create the session directory '%s': %s", dir, strerror(errno));
            return -1;
        }
    }
    snprintf(err, err_len, "cannot find a free session directory name under '%s'", root);
    return -1;
}
