/*
 * One client connection of `gpufl serve`, plain or TLS (OpenSSL), read and
 * written under deadlines: the socket is non-blocking and every wait is a
 * poll() bounded by the deadline the caller gives, so a client that stops
 * sending mid-request costs its worker at most that long.
 *
 * Threads: a connection is used by one worker at a time (the server hands
 * it from the poller to a worker and back).
 */
#ifndef GPUFL_SERVE_SERVE_CONN_H
#define GPUFL_SERVE_SERVE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

typedef struct gpufl__serve_conn {
    int fd;
    SSL *ssl;       /* NULL: plain HTTP */
    bool handshake; /* TLS: done */
    uint8_t *buf;   /* read, not yet consumed: buf[off..len) */
    size_t off, len, cap;
    /* the server's bookkeeping (serve_server.c) */
    uint64_t idle_since_ns;
    int state;
    struct gpufl__serve_conn *prev, *next;
} gpufl__serve_conn;

/* A connection over the accepted, non-blocking fd; TLS when ctx. NULL when
 * out of memory (fd left open). */
gpufl__serve_conn *gpufl__serve_conn_new(int fd, SSL_CTX *ctx);
/* Closes the socket (after a TLS close_notify, not waited for) and frees c. */
void gpufl__serve_conn_free(gpufl__serve_conn *c);

uint64_t gpufl__serve_now_ns(void);

/* TLS: the handshake, if not done yet. 0 or GPUFL_EIO (failed, timed out). */
int gpufl__serve_conn_handshake(gpufl__serve_conn *c, uint64_t deadline_ns) __attribute__((warn_unused_result));

/* Reads what the peer has sent (waiting for at least one byte until the
 * deadline) and appends it to buf, growing it up to max bytes held. The
 * bytes read (> 0); 0 when the peer closed; GPUFL_EIO on an error or the
 * deadline; GPUFL_ENOMEM. */
long gpufl__serve_conn_fill(gpufl__serve_conn *c, size_t max, uint64_t deadline_ns) __attribute__((warn_unused_result));

/* Writes data[0..n) whole. 0 or GPUFL_EIO (error, peer gone, deadline). */
int gpufl__serve_conn_write(gpufl__serve_conn *c, const void *data, size_t n, uint64_t deadline_ns)
    __attribute__((warn_unused_result));

/* Bytes already read (or held by TLS) that no request has consumed: the
 * next request can start without waiting for the socket. */
bool gpufl__serve_conn_pending(const gpufl__serve_conn *c);

/* Drops the consumed bytes buf[0..off). */
void gpufl__serve_conn_compact(gpufl__serve_conn *c);

#endif /* GPUFL_SERVE_SERVE_CONN_H */
