/* A client connection under deadlines (serve_conn.h). */
#include "serve/serve_conn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>

#include "gpufl/gpufl.h"

uint64_t gpufl__serve_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

gpufl__serve_conn *gpufl__serve_conn_new(int fd, SSL_CTX *ctx)
{
    gpufl__serve_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    if (ctx) {
        c->ssl = SSL_new(ctx);
        if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
            SSL_free(c->ssl);
            free(c);
            return NULL;
        }
    }
    return c;
}

void gpufl__serve_conn_free(gpufl__serve_conn *c)
{
    if (!c)
        return;
    if (c->ssl) {
        if (c->handshake)
            (void)SSL_shutdown(c->ssl); /* close_notify, without waiting for the peer's */
        SSL_free(c->ssl);
    }
    close(c->fd);
    free(c->buf);
    free(c);
}

/* Waits until fd is ready for events or the deadline passes. 0 ready,
 * GPUFL_EIO otherwise. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = gpufl__serve_now_ns();
        if (now >= deadline_ns)
            return GPUFL_EIO;
        uint64_t ms = (deadline_ns - now + 999999) / 1000000;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return GPUFL_EIO;
    }
}

/* After an OpenSSL call returned r: wait as it asks and return 1 (try
 * again), or return GPUFL_EIO. Clears OpenSSL's error queue of this thread. */
static int tls_wait(gpufl__serve_conn *c, int r, uint64_t deadline_ns)
{
    int e = SSL_get_error(c->ssl, r);
    ERR_clear_error();
    if (e == SSL_ERROR_WANT_READ)
        return wait_fd(c->fd, POLLIN, deadline_ns) == 0 ? 1 : GPUFL_EIO;
    if (e == SSL_ERROR_WANT_WRITE)
        return wait_fd(c->fd, POLLOUT, deadline_ns) == 0 ? 1 : GPUFL_EIO;
    return GPUFL_EIO;
}

int gpufl__serve_conn_handshake(gpufl__serve_conn *c, uint64_t deadline_ns)
{
    while (c->ssl && !c->handshake) {
        int r = SSL_accept(c->ssl);
        if (r == 1)
            c->handshake = true;
        else if (tls_wait(c, r, deadline_ns) < 0)
            return GPUFL_EIO;
    }
    return 0;
}

void gpufl__serve_conn_compact(gpufl__serve_conn *c)
{
    if (c->off == 0)
        return;
    memmove(c->buf, c->buf + c->off, c->len - c->off);
    c->len -= c->off;
    c->off = 0;
}

long gpufl__serve_conn_fill(gpufl__serve_conn *c, size_t max, uint64_t deadline_ns)
{
    if (c->len >= max)
        return GPUFL_ENOMEM;
    if (c->cap - c->len < 16384 && c->cap < max) {
        size_t cap = c->cap ? c->cap * 2 : 32768;
        while (cap - c->len < 16384)
            cap *= 2;
        if (cap > max)
            cap = max;
        uint8_t *p = realloc(c->buf, cap);
        if (!p)
            return GPUFL_ENOMEM;
        c->buf = p;
        c->cap = cap;
    }
    size_t room = c->cap - c->len;
    for (;;) {
        if (c->ssl) {
            int r = SSL_read(c->ssl, c->buf + c->len, room > INT32_MAX ? INT32_MAX : (int)room);
            if (r > 0) {
                c->len += (size_t)r;
                return r;
            }
            if (SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN)
                return 0;
            if (tls_wait(c, r, deadline_ns) < 0)
                return GPUFL_EIO;
            continue;
        }
        ssize_t r = recv(c->fd, c->buf + c->len, room, 0);
        if (r > 0) {
            c->len += (size_t)r;
            return (long)r;
        }
        if (r == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if ((errno != EAGAIN && errno != EWOULDBLOCK) || wait_fd(c->fd, POLLIN, deadline_ns) != 0)
            return GPUFL_EIO;
    }
}

int gpufl__serve_conn_write(gpufl__serve_conn *c, const void *data, size_t n, uint64_t deadline_ns)
{
    const uint8_t *p = data;
    while (n) {
        if (c->ssl) {
            int r = SSL_write(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
            if (r > 0) {
                p += r;
                n -= (size_t)r;
            } else if (tls_wait(c, r, deadline_ns) < 0) {
                return GPUFL_EIO;
            }
            continue;
        }
        ssize_t r = send(c->fd, p, n, MSG_NOSIGNAL);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || wait_fd(c->fd, POLLOUT, deadline_ns) != 0) {
            return GPUFL_EIO;
        }
    }
    return 0;
}

bool gpufl__serve_conn_pending(const gpufl__serve_conn *c)
{
    return c->len > c->off || (c->ssl && SSL_pending(c->ssl) > 0);
}
