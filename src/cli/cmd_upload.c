/*
 * `gpufl upload`: sessions to a gpufl server (docs/UPLOAD.md) through the
 * uploader of libgpufl (upload/upload.h), for scripts: one summary line on
 * stdout, warnings and errors on stderr, exit 0 / 1 / 2.
 *
 * The API key is taken from GPUFL_API_KEY or a file, never from the
 * command line: arguments are readable by every user of the machine
 * (ps, /proc/PID/cmdline) and land in shell histories, so a literal
 * --api-key is refused with that reason rather than quietly accepted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/regular_file.h"
#include "gpufl/gpufl.h"
#include "upload/upload.h"

#include <unistd.h>

#define KEY_MAX 4096

static void print_warning(const char *msg, void *arg)
{
    (void)arg;
    fprintf(stderr, "gpufl upload: warning: %s\n", msg);
}

/* The key: the first line of path, without its line end. NULL after saying
 * why on stderr. */
static char *read_key_file(const char *path)
{
    char why[256];
    int fd = gpufl__open_regular(path, why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "gpufl upload: --api-key-file %s: %s\n", path, why);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & 0077))
        fprintf(stderr, "gpufl upload: warning: %s can be read by other users (chmod 600 it)\n", path);
    char *key = calloc(1, KEY_MAX + 1);
    ssize_t n = key ? read(fd, key, KEY_MAX) : -1;
    int e = errno;
    close(fd);
    if (n < 0) {
        fprintf(stderr, "gpufl upload: --api-key-file %s: %s\n", path, strerror(e));
        free(key);
        return NULL;
    }
    key[strcspn(key, "\r\n")] = 0;
    if (!key[0]) {
        fprintf(stderr, "gpufl upload: --api-key-file %s: the first line is empty\n", path);
        free(key);
        return NULL;
    }
    return key;
}

int gpufl_cmd_upload(int argc, char **argv)
{
    gpufl_upload_options o;
    gpufl_upload_options_init(&o);
    const char *key_file = NULL;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    size_t npaths = 0;
    if (!paths) {
        fprintf(stderr, "gpufl upload: out of memory\n");
        return GFL_EXIT_FAIL;
    }
    int rc = -1;
    for (int i = 1; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--api-key") || !strncmp(a, "--api-key=", 10))
            rc = gpufl__cli_usage_error("upload",
                                        "--api-key is not taken: a key on the command line is visible to every "
                                        "user (ps); use --api-key-file F or GPUFL_API_KEY");
        else if (!strcmp(a, "--backend-url") && has_value)
            o.backend_url = argv[++i];
        else if (!strcmp(a, "--api-key-file") && has_value)
            key_file = argv[++i];
        else if (!strcmp(a, "--api-path") && has_value)
            o.api_path = argv[++i];
        else if (!strcmp(a, "--ca-file") && has_value)
            o.ca_file = argv[++i];
        else if (!strcmp(a, "--session-id") && has_value)
            o.session_id = argv[++i];
        else if (!strcmp(a, "--all-sessions"))
            o.all_sessions = true;
        else if (!strcmp(a, "--force"))
            o.force = true;
        else if (a[0] == '-' && a[1])
            rc = gpufl__cli_usage_error("upload", "unknown option, or one without its value: '%s'", a);
        else
            paths[npaths++] = a;
    }
    if (rc < 0 && !npaths)
        rc = gpufl__cli_usage_error("upload", "which sessions? give a session directory, a job directory or a "
                                              "log_path");
    if (rc < 0 && o.all_sessions && o.session_id)
        rc = gpufl__cli_usage_error("upload", "--session-id and --all-sessions exclude each other");
    if (rc >= 0) {
        free(paths);
        return rc;
    }
    char *key = NULL;
    if (key_file && !(key = read_key_file(key_file))) {
        free(paths);
        return GFL_EXIT_FAIL;
    }
    o.api_key = key;
    o.on_warning = print_warning;
    gpufl_upload_result r = {.struct_size = sizeof r};
    int urc = gpufl__upload_paths(&o, paths, npaths, &r);
    if (key) {
        memset(key, 0, KEY_MAX);
        free(key);
    }
    free(paths);
    /* failures were printed as warnings when they happened; the first one
     * again, as the reason, when there were others after it or none */
    if (urc != 0 && r.warning_count != 1)
        fprintf(stderr, "gpufl upload: %s\n", gpufl_last_error());
    printf("gpufl upload: %u session%s sent%s, %llu events uploaded, %llu duplicates, %llu rejected, %llu bytes, "
           "%.1f s\n",
           r.sessions_processed, r.sessions_processed == 1 ? "" : "s",
           r.sessions_failed ? (r.sessions_failed == 1 ? " (1 failed)" : " (some failed)") : "",
           (unsigned long long)r.events_uploaded, (unsigned long long)r.events_duplicate,
           (unsigned long long)r.events_rejected, (unsigned long long)r.bytes_uploaded, r.elapsed_ms / 1000.0);
    return urc == 0 ? GFL_EXIT_OK : GFL_EXIT_FAIL;
}
