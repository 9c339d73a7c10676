/*
 * One PC-sampling process per GPU (see pcs_claim.h).
 *
 * A process keeps one open file per GPU it claimed: flock belongs to the
 * open file, so a second open and flock of the same file in this process
 * would refuse this process itself. For the same reason a forked child
 * (a DataLoader worker) shares the parent's lock: the child closes its
 * copies at once, so that the lock ends with the parent's release and
 * not with the last of its children.
 */
#include "backend/cupti/pcs_claim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_CLAIMS 64

static struct {
    pthread_mutex_t lock;
    size_t n;
    int fd[MAX_CLAIMS];
    char gpu[MAX_CLAIMS][64];
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t at_fork_once = PTHREAD_ONCE_INIT;

static void before_fork(void) { pthread_mutex_lock(&C.lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&C.lock); }

/* Closing (not unlocking: that would end the parent's lock too) drops
 * the child's share of each lock. */
static void after_fork_child(void)
{
    for (size_t i = 0; i < C.n; i++)
        close(C.fd[i]);
    C.n = 0;
    pthread_mutex_unlock(&C.lock);
}

static void watch_forks(void) { (void)pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

/* The file's name: the GPU's id with anything but letters, digits, '.',
 * ':' and '-' made '_' (a bus id is "0000:65:00.0"). */
static void claim_path(const char *dir, const char *gpu, char *out, size_t len)
{
    char safe[64];
    size_t i = 0;
    for (; gpu[i] && i < sizeof safe - 1; i++) {
        char ch = gpu[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                  ch == ':' || ch == '-';
        safe[i] = ok ? ch : '_';
    }
    safe[i] = '\0';
    snprintf(out, len, "%s/gpufl-pc-sampling-%s.lock", dir, safe);
}

/* The pid the holder wrote into the file, or 0. */
static long holder_of(int fd)
{
    char text[32] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    return strtol(text, NULL, 10);
}

static int claim_locked(const char *dir, const char *gpu, char *err, size_t err_len)
{
    for (size_t i = 0; i < C.n; i++)
        if (!strcmp(C.gpu[i], gpu))
            return 0;
    char path[4200];
    claim_path(dir, gpu, path, sizeof path);
    if (C.n == MAX_CLAIMS) {
        snprintf(err, err_len, "more than %d GPUs claimed; %s is not checked", MAX_CLAIMS, path);
        return 0;
    }
    /* 0666 and no symlink: every user's gpufl takes the same lock, and a
     * link planted in the shared directory is not followed */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(err, err_len, "cannot open %s (%s); other processes sampling the GPU are not checked", path,
                 strerror(errno));
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, err_len, "%s is not a regular file; other processes sampling the GPU are not checked", path);
        return 0;
    }
    if (st.st_uid == geteuid())
        (void)fchmod(fd, 0666); /* the umask took some of it */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        long pid = holder_of(fd);
        close(fd);
        if (e == EWOULDBLOCK) {
            if (pid > 0)
                snprintf(err, err_len, "GPU %s is being PC-sampled by another process (pid %ld, %s)", gpu, pid, path);
            else
                snprintf(err, err_len, "GPU %s is being PC-sampled by another process (%s)", gpu, path);
            return -1;
        }
        snprintf(err, err_len, "cannot lock %s (%s); other processes sampling the GPU are not checked", path,
                 strerror(e));
        return 0;
    }
    /* the holder's pid, for whoever is refused (the lock holds without it) */
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    ssize_t written = ftruncate(fd, 0) == 0 ? pwrite(fd, pid, (size_t)n, 0) : -1;
    (void)written;
    C.fd[C.n] = fd;
    snprintf(C.gpu[C.n], sizeof C.gpu[C.n], "%s", gpu);
    C.n++;
    return 0;
}

int gpufl__pcs_claim(const char *dir, const char *gpu, char *err, size_t err_len)
{
    err[0] = '\0';
    (void)pthread_once(&at_fork_once, watch_forks);
    pthread_mutex_lock(&C.lock);
    int rc = claim_locked(dir, gpu, err, err_len);
    pthread_mutex_unlock(&C.lock);
    return rc;
}

void gpufl__pcs_release_claims(void)
{
    pthread_mutex_lock(&C.lock);
    for (size_t i = 0; i < C.n; i++) {
        (void)flock(C.fd[i], LOCK_UN); /* a child that has not closed its copy yet keeps no lock */
        close(C.fd[i]);
    }
    C.n = 0;
    pthread_mutex_unlock(&C.lock);
}
