/*
 * The real system calls behind gpufl__os, and small helpers built on them.
 */
#include "core/os.h"
#include "core/thread_signals.h"

#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int real_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

const gpufl__os_ops gpufl__os_real = {
    .open = real_open,
    .write = write,
    .fdatasync = fdatasync,
    .close = close,
    .rename = rename,
    .ftruncate = ftruncate,
    .statvfs = statvfs,
    .mkdir = mkdir,
    .unlink = unlink,
};

const gpufl__os_ops *gpufl__os = &gpufl__os_real;

size_t gpufl__write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t w = gpufl__os->write(fd, p + done, n - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return done;
        }
        if (w == 0) {
            errno = ENOSPC;
            return done;
        }
        done += (size_t)w;
    }
    return done;
}

int gpufl__mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) {
        errno = len ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (gpufl__os->mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (gpufl__os->mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int gpufl__write_file_atomic(const char *path, const void *data, size_t n)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = gpufl__os->open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int saved = 0;
    if (gpufl__write_all(fd, data, n) != n || gpufl__os->fdatasync(fd) != 0)
        saved = errno ? errno : EIO;
    if (gpufl__os->close(fd) != 0 && !saved)
        saved = errno;
    if (!saved && gpufl__os->rename(tmp, path) != 0)
        saved = errno;
    if (saved) {
        gpufl__os->unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

int gpufl__thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256u << 10);
    sigset_t old;
    gpufl__block_program_signals(&old); /* the new thread inherits the mask */
    int rc = pthread_create(thread, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        pthread_setname_np(*thread, name);
    return rc;
}
