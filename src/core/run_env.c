/*
 * The process claim and the run report (see run_env.h). Called by
 * gpufl_init under its lifecycle lock; `claimed_here` is guarded by it.
 *
 * setenv() while another thread calls getenv() is a data race in C; the
 * claim is made once, when a session starts in a process that has
 * CUDA_INJECTION64_PATH set (early, usually before the program has threads,
 * or inside cuInit where the injection library runs anyway), and never on
 * a recording path.
 */
#include "core/run_env.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "core/event.h"
#include "core/log.h"

static bool claimed_here;

/* "<pid>:<exec id>": this process image. AT_RANDOM points at 16 bytes the
 * kernel fills anew at every execve, the same for every copy of gpufl in
 * the image; a fork copies them with the rest of memory, so the pid is
 * needed as well. */
static void image_id(char *buf, size_t len)
{
    uint64_t r = 0;
    const void *bytes = (const void *)getauxval(AT_RANDOM);
    if (bytes)
        memcpy(&r, bytes, sizeof r);
    snprintf(buf, len, "%d:%016" PRIx64, (int)getpid(), r);
}

bool gpufl__run_claim(bool *claimed_now)
{
    *claimed_now = false;
    char id[64];
    image_id(id, sizeof id);
    const char *mark = getenv(GPUFL_INJECTED_PID_ENV);
    if (mark && strcmp(mark, id) == 0)
        return claimed_here; /* this image is claimed: by this copy, or by another */
    /* Only an injection library can bring a second copy into the process. */
    if (!getenv("CUDA_INJECTION64_PATH"))
        return true;
    if (setenv(GPUFL_INJECTED_PID_ENV, id, 1) != 0) {
        /* out of memory: record anyway; at worst a second copy records too */
        gpufl__log(GFL_LOG_DEBUG, "cannot set %s: %s", GPUFL_INJECTED_PID_ENV, strerror(errno));
        return true;
    }
    claimed_here = true;
    *claimed_now = true;
    return true;
}

void gpufl__run_release(void)
{
    if (!claimed_here)
        return;
    claimed_here = false;
    char id[64];
    image_id(id, sizeof id);
    const char *mark = getenv(GPUFL_INJECTED_PID_ENV);
    if (mark && strcmp(mark, id) == 0)
        unsetenv(GPUFL_INJECTED_PID_ENV);
}

void gpufl__run_report(int pid, const char *dir)
{
    const char *path = getenv(GPUFL_RUN_REPORT_ENV);
    if (!path || !path[0])
        return;
    char line[PATH_MAX + 32];
    int n = snprintf(line, sizeof line, "%d %s\n", pid, dir);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        gpufl__log(GFL_LOG_DEBUG, "cannot open the run report %s: %s", path, strerror(errno));
        return;
    }
    ssize_t w;
    do
        w = write(fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
    if (w != n)
        gpufl__log(GFL_LOG_DEBUG, "cannot append to the run report %s: %s", path,
                   w < 0 ? strerror(errno) : "short write");
    close(fd);
}
