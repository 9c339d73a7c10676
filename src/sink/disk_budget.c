/*
 * Session disk cap and free-space floor (see disk_budget.h).
 */
#include "sink/disk_budget.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "core/os.h"

#define CHECK_EVERY_BYTES (16u << 20)
#define CHECK_EVERY_NS 1000000000ull

void gpufl__disk_budget_init(gpufl__disk_budget *b, const char *dir, uint64_t cap_bytes, uint64_t floor_bytes)
{
    memset(b, 0, sizeof *b);
    snprintf(b->dir, sizeof b->dir, "%s", dir);
    b->cap_bytes = cap_bytes;
    b->floor_bytes = floor_bytes;
}

static void reserve_path(const gpufl__disk_budget *b, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", b->dir, GFL_DISK_RESERVE_FILE);
}

void gpufl__disk_budget_keep_reserve(gpufl__disk_budget *b)
{
    static const char zeros[4096];
    char path[4200];
    reserve_path(b, path, sizeof path);
    int fd = gpufl__os->open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    /* written, not fallocate'd or sparse: the blocks must really be taken
     * from the file system, on every file system (tmpfs included) */
    size_t done = 0;
    while (done < GFL_DISK_RESERVE_BYTES && gpufl__write_all(fd, zeros, sizeof zeros) == sizeof zeros)
        done += sizeof zeros;
    gpufl__os->close(fd);
    if (done < GFL_DISK_RESERVE_BYTES) {
        gpufl__os->unlink(path);
        return;
    }
    b->reserve_held = true;
}

void gpufl__disk_budget_release(gpufl__disk_budget *b)
{
    if (!b->reserve_held)
        return;
    b->reserve_held = false;
    char path[4200];
    reserve_path(b, path, sizeof path);
    gpufl__os->unlink(path);
}

static void stop(gpufl__disk_budget *b, gpufl__stop_reason r, uint64_t now_ns)
{
    if (b->stopped)
        return;
    b->stopped = r;
    b->stopped_at_ns = now_ns;
    /* the closing records that say why are written next, into this space */
    gpufl__disk_budget_release(b);
}

bool gpufl__disk_budget_allow(gpufl__disk_budget *b, size_t n, uint64_t now_ns)
{
    if (b->stopped)
        return false;
    uint64_t usable = b->cap_bytes > GFL_BUDGET_RESERVE ? b->cap_bytes - GFL_BUDGET_RESERVE : 0;
    if (b->written + n > usable) {
        snprintf(b->detail, sizeof b->detail, "session_max_bytes (%llu) reached after %llu bytes of logs",
                 (unsigned long long)b->cap_bytes, (unsigned long long)b->written);
        stop(b, GFL_STOP_DISK_CAP, now_ns);
        return false;
    }
    if (b->floor_bytes && (b->written + n >= b->next_check_bytes || now_ns >= b->next_check_ns)) {
        struct statvfs st;
        b->next_check_bytes = b->written + n + CHECK_EVERY_BYTES;
        b->next_check_ns = now_ns + CHECK_EVERY_NS;
        if (gpufl__os->statvfs(b->dir, &st) == 0) {
            unsigned long long avail = (unsigned long long)st.f_bavail * st.f_frsize;
            if (avail < b->floor_bytes + n) {
                snprintf(b->detail, sizeof b->detail, "free space %llu bytes is below min_free_bytes (%llu)", avail,
                         (unsigned long long)b->floor_bytes);
                stop(b, GFL_STOP_FREE_SPACE, now_ns);
                return false;
            }
        }
    }
    return true;
}

void gpufl__disk_budget_fail(gpufl__disk_budget *b, const char *what, int err, uint64_t now_ns)
{
    if (b->stopped)
        return;
    snprintf(b->detail, sizeof b->detail, "%s: %s", what, strerror(err));
    stop(b, GFL_STOP_IO_ERROR, now_ns);
}
