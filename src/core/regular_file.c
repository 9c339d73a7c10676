/*
 * Regular files only (see regular_file.h).
 */
#include "core/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a file";
}

int gpufl__open_regular(const char *path, char *why, size_t why_len)
{
    /* O_NONBLOCK: open() of a FIFO returns at once instead of waiting for a
     * writer; O_NOCTTY: a terminal device never becomes ours. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        snprintf(why, why_len, "%s", strerror(e));
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "not a regular file (%s)", kind_of(st.st_mode));
        close(fd);
        errno = EINVAL;
        return -1;
    }
    /* Reads of a regular file never block anyway; clearing the flag keeps
     * the descriptor what a plain open() gives. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

json_t *gpufl__json_load_regular(const char *path, size_t flags, json_error_t *jerr)
{
    char why[128];
    int fd = gpufl__open_regular(path, why, sizeof why);
    if (fd < 0) {
        memset(jerr, 0, sizeof *jerr);
        jerr->line = jerr->column = jerr->position = -1;
        snprintf(jerr->source, sizeof jerr->source, "%s", path);
        snprintf(jerr->text, sizeof jerr->text, "%s", why);
        return NULL;
    }
    json_t *root = json_loadfd(fd, flags, jerr);
    close(fd);
    return root;
}

int gpufl__read_fd_all(int fd, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t cap = max < 65536 ? max + 1 : 65536, n = 0;
    char *b = malloc(cap + 1); /* + 1: the NUL */
    if (!b) {
        errno = ENOMEM;
        return -1;
    }
    while (n < max + 1) {
        if (n == cap) {
            size_t grow = cap > (max + 1) / 2 ? max + 1 : cap * 2;
            char *nb = realloc(b, grow + 1);
            if (!nb) {
                free(b);
                errno = ENOMEM;
                return -1;
            }
            b = nb;
            cap = grow;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = '\0';
    *out = b;
    *len = n;
    return 0;
}
