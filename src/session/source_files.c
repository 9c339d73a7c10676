/*
 * The session's sources/ copy (see source_files.h).
 */
#include "session/source_files.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/event.h"
#include "core/log.h"
#include "core/regular_file.h"

/* Open addressing over twice the paths kept, so a probe ends on an empty
 * slot: the plugin may call note() for every SASS record. */
#define SLOTS (2 * GPUFL__SOURCES_MAX_PATHS)

static struct {
    pthread_mutex_t lock;
    char *paths[GPUFL__SOURCES_MAX_PATHS]; /* in the order first named */
    uint32_t slot[SLOTS];                  /* index + 1 into paths, 0 = empty */
    size_t n;
    uint64_t not_kept; /* distinct or not: paths past the bound */
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void gpufl__source_files_note(const char *path)
{
    if (!path || !path[0] || strlen(path) >= 4096)
        return;
    pthread_mutex_lock(&S.lock);
    size_t i = hash(path) % SLOTS;
    while (S.slot[i] && strcmp(S.paths[S.slot[i] - 1], path))
        i = (i + 1) % SLOTS;
    if (!S.slot[i]) {
        char *copy = S.n < GPUFL__SOURCES_MAX_PATHS ? strdup(path) : NULL;
        if (copy) {
            S.paths[S.n++] = copy;
            S.slot[i] = (uint32_t)S.n;
        } else {
            S.not_kept++;
        }
    }
    pthread_mutex_unlock(&S.lock);
}

/* "0007-kernels.cu": the index and the path's last component, with every
 * byte but letters, digits, '.', '_' and '-' made '_' and a leading '.'
 * too, so the stored name never leaves sources/ nor hides. */
static void stored_name(size_t index, const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int n = snprintf(buf, len, "%04zu-", index + 1);
    size_t at = n > 0 ? (size_t)n : 0;
    for (const char *c = base; *c && at + 1 < len && c - base < 64; c++) {
        char ch = *c;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                  ch == '-' || (ch == '.' && c != base);
        buf[at++] = ok ? ch : '_';
    }
    buf[at] = '\0';
}

static int write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            unlink(path);
            errno = e;
            return -1;
        }
        done += (size_t)w;
    }
    return close(fd);
}

/* One file: copied into dir (its entry's "stored"), or its entry says why
 * not ("skipped"). *total counts the bytes copied so far. */
static json_t *copy_one(const char *dir, size_t index, const char *path, size_t *total)
{
    json_t *e = json_pack("{s:s}", "path", path);
    char why[256] = "";
    int fd = gpufl__open_regular(path, why, sizeof why);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) != 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        json_object_set_new(e, "size", json_null());
        json_object_set_new(e, "mtime_ns", json_null());
        json_object_set_new(e, "stored", json_null());
        json_object_set_new(e, "skipped", json_string(why));
        return e;
    }
    json_object_set_new(e, "size", json_integer((json_int_t)st.st_size));
    json_object_set_new(e, "mtime_ns",
                        json_integer((json_int_t)st.st_mtim.tv_sec * 1000000000 + (json_int_t)st.st_mtim.tv_nsec));
    char *data = NULL;
    size_t len = 0;
    if ((uint64_t)st.st_size > GPUFL__SOURCES_MAX_FILE)
        snprintf(why, sizeof why, "larger than %u bytes", GPUFL__SOURCES_MAX_FILE);
    else if (*total + (size_t)st.st_size > GPUFL__SOURCES_MAX_TOTAL)
        snprintf(why, sizeof why, "the copies reached %u bytes in all", GPUFL__SOURCES_MAX_TOTAL);
    else if (gpufl__read_fd_all(fd, GPUFL__SOURCES_MAX_FILE, &data, &len) != 0)
        snprintf(why, sizeof why, "%s", strerror(errno));
    else if (len > GPUFL__SOURCES_MAX_FILE || len != (size_t)st.st_size)
        snprintf(why, sizeof why, "changed while it was read");
    close(fd);
    char name[96], at[4200];
    stored_name(index, path, name, sizeof name);
    snprintf(at, sizeof at, "%s/%s", dir, name);
    if (!why[0] && write_file(at, data, len) != 0)
        snprintf(why, sizeof why, "could not write %s: %s", at, strerror(errno));
    free(data);
    if (why[0]) {
        json_object_set_new(e, "stored", json_null());
        json_object_set_new(e, "skipped", json_string(why));
    } else {
        *total += len;
        json_object_set_new(e, "stored", json_string(name));
        json_object_set_new(e, "skipped", json_null());
    }
    return e;
}

void gpufl__source_files_copy(const char *session_dir)
{
    pthread_mutex_lock(&S.lock);
    size_t n = S.n;
    char **paths = malloc((n ? n : 1) * sizeof *paths);
    if (paths)
        memcpy(paths, S.paths, n * sizeof *paths);
    uint64_t not_kept = S.not_kept;
    S.n = 0;
    S.not_kept = 0;
    memset(S.slot, 0, sizeof S.slot);
    pthread_mutex_unlock(&S.lock);
    if (!paths) {
        gpufl__log(GFL_LOG_WARN, "sources: out of memory; no source files copied");
        return;
    }
    if (n && session_dir) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/sources", session_dir);
        if (mkdir(dir, 0755) != 0) {
            gpufl__log(GFL_LOG_WARN, "sources: could not create %s (%s); no source files copied", dir, strerror(errno));
        } else {
            json_t *files = json_array();
            size_t total = 0, copied = 0;
            for (size_t i = 0; i < n; i++) {
                json_t *e = copy_one(dir, i, paths[i], &total);
                copied += json_is_string(json_object_get(e, "stored"));
                json_array_append_new(files, e);
            }
            json_t *index = json_pack("{s:i,s:i,s:i,s:I,s:o}", "version", 1, "max_file_bytes",
                                      (int)GPUFL__SOURCES_MAX_FILE, "max_total_bytes", (int)GPUFL__SOURCES_MAX_TOTAL,
                                      "paths_not_listed", (json_int_t)not_kept, "files", files);
            char at[4300];
            snprintf(at, sizeof at, "%s/index.json", dir);
            char *text = index ? json_dumps(index, JSON_INDENT(1)) : NULL;
            if (!text || write_file(at, text, strlen(text)) != 0)
                gpufl__log(GFL_LOG_WARN, "sources: could not write %s", at);
            else
                gpufl__log(GFL_LOG_INFO,
                           "sources: %zu of the %zu source files line info named copied into %s (%zu bytes)", copied, n,
                           dir, total);
            free(text);
            json_decref(index);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
