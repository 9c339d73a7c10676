/*
 * Reader input: a file through pread(), or memory (see input.h).
 */
#include "read/input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/regular_file.h"
#include "gpufl/gpufl.h"

int gpufl__input_open_file(gpufl__input *in, const char *path, char *err, size_t err_len)
{
    memset(in, 0, sizeof *in);
    snprintf(in->name, sizeof in->name, "%s", path);
    /* Regular files only: a FIFO in place of a log would block the open (or
     * the first read) until something writes to it. */
    char why[128];
    in->fd = gpufl__open_regular(path, why, sizeof why);
    struct stat st;
    if (in->fd < 0 || fstat(in->fd, &st) != 0) {
        int e = errno;
        snprintf(err, err_len, "cannot open %s: %s", path, in->fd < 0 ? why : strerror(e));
        if (in->fd >= 0)
            close(in->fd);
        in->fd = -1;
        return e == ENOENT ? GPUFL_ENOTFOUND : GPUFL_EIO;
    }
    in->size = (uint64_t)st.st_size;
    return 0;
}

void gpufl__input_memory(gpufl__input *in, const void *data, size_t n, const char *name)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->mem = data;
    in->size = n;
    snprintf(in->name, sizeof in->name, "%s", name);
}

ssize_t gpufl__input_read(gpufl__input *in, uint64_t off, void *buf, size_t n)
{
    if (in->fd < 0) {
        if (off >= in->size)
            return 0;
        if (n > in->size - off)
            n = (size_t)(in->size - off);
        if (n)
            memcpy(buf, in->mem + off, n);
        return (ssize_t)n;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(in->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

void gpufl__input_close(gpufl__input *in)
{
    if (in->fd >= 0)
        close(in->fd);
    in->fd = -1;
}
