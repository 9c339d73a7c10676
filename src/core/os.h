/*
 * The system calls that storage makes, reached through a table so tests can
 * inject failures (ENOSPC, EIO, short writes, a full file system) without
 * touching a real disk. Production code uses gpufl__os; tests swap it.
 */
#ifndef GPUFL_CORE_OS_H
#define GPUFL_CORE_OS_H

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

typedef struct gpufl__os_ops {
    int (*open)(const char *path, int flags, mode_t mode);
    ssize_t (*write)(int fd, const void *buf, size_t n);
    int (*fdatasync)(int fd);
    int (*close)(int fd);
    int (*rename)(const char *from, const char *to);
    int (*ftruncate)(int fd, off_t length);
    int (*statvfs)(const char *path, struct statvfs *st);
    int (*mkdir)(const char *path, mode_t mode);
    /* Appended. */
    int (*unlink)(const char *path);
} gpufl__os_ops;

extern const gpufl__os_ops gpufl__os_real;
extern const gpufl__os_ops *gpufl__os;

/* Writes all n bytes, retrying on EINTR and short writes. Returns the bytes
 * written: n, or fewer with errno set when the write failed part-way. */
size_t gpufl__write_all(int fd, const void *buf, size_t n);

/* mkdir -p with mode 0755. Returns 0 or -1 with errno set. */
int gpufl__mkdir_p(const char *path);

/* Writes a whole file atomically: a temporary beside it, fsync, rename.
 * Returns 0, or -1 with errno set and the old file untouched. */
int gpufl__write_file_atomic(const char *path, const void *data, size_t n);

/* Starts one of gpufl's own threads (collector, sampler, dump writer,
 * trace windows): a 256 KiB stack, a name, and the program's signals
 * blocked (core/thread_signals.h), so that its handlers for them run on its
 * own threads; a fault on ours still reaches the crash handler.
 * Returns 0 or pthread_create's error number. */
int gpufl__thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name);

#endif /* GPUFL_CORE_OS_H */
