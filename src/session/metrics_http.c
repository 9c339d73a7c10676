/*
 * The metrics endpoint's HTTP server (metrics_http.h). One thread polls
 * the listening socket, a wake-up pipe and at most MAX_CONN connections,
 * all non-blocking: a connection reads its request head into a fixed
 * buffer, gets its whole answer built at once, and is written as the
 * peer takes it, then closed (HTTP/1.1 with "Connection: close": a scrape
 * every few seconds does not need keep-alive). Built for a few scrapers
 * every second or so; an answer is tens of KiB.
 */
#include "session/metrics_http.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/bytebuf.h"
#include "core/listen_address.h"

#define MAX_CONN 32
#define MAX_HEAD 8192
#define CONN_DEADLINE_NS (5ull * 1000000000ull)

typedef struct conn {
    int fd; /* -1: slot free */
    uint64_t deadline_ns;
    size_t head_len;
    char head[MAX_HEAD + 1];
    gpufl__bytebuf out; /* the answer, built once the head is complete */
    size_t out_off;
    bool answering;
} conn;

struct gpufl__metrics_server {
    int listen_fd;
    int wake[2]; /* written by stop to end poll() */
    pthread_t thread;
    bool openmetrics;
    char address[128];
    conn conns[MAX_CONN];
    pthread_mutex_t lock; /* guards text, om and counters */
    gpufl__bytebuf text[GPUFL__METRICS_PARTS], om[GPUFL__METRICS_PARTS];
    gpufl__metrics_counters counters;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- listening ------------------------------------------------------------ */

static int open_listener(gpufl__metrics_server *s, const char *addr, char *err, size_t err_len)
{
    return gpufl__listen_tcp(addr, 64, &s->listen_fd, s->address, sizeof s->address, err, err_len);
}

/* ---- answering ---------------------------------------------------------- */

static void conn_close(conn *c)
{
    close(c->fd);
    c->fd = -1;
    gpufl__bytebuf_free(&c->out);
}

static void respond(conn *c, const char *status, const char *type, const char *extra, const void *body, size_t len)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n", status,
                     type, len, extra);
    c->out.len = 0;
    if (gpufl__bytebuf_append(&c->out, head, (size_t)n) != 0 || gpufl__bytebuf_append(&c->out, body, len) != 0)
        c->out.len = 0; /* out of memory: close without an answer */
    c->out_off = 0;
    c->answering = true;
}

static void respond_error(gpufl__metrics_server *s, conn *c, const char *status, const char *extra)
{
    char body[128];
    int n = snprintf(body, sizeof body, "%s\n", status);
    pthread_mutex_lock(&s->lock);
    s->counters.bad_requests++;
    pthread_mutex_unlock(&s->lock);
    respond(c, status, "text/plain; charset=utf-8", extra, body, (size_t)n);
}

/* Whether the request head's Accept header names OpenMetrics. */
static bool accepts_openmetrics(const char *head)
{
    for (const char *line = strchr(head, '\n'); line; line = strchr(line + 1, '\n'))
        if (!strncasecmp(line + 1, "accept:", 7)) {
            const char *end = strchr(line + 1, '\n');
            const char *om = strstr(line + 1, "application/openmetrics-text");
            return om && (!end || om < end);
        }
    return false;
}

static void answer_metrics(gpufl__metrics_server *s, conn *c, bool om, bool head_only)
{
    gpufl__bytebuf body = {0};
    pthread_mutex_lock(&s->lock);
    s->counters.scrapes++;
    int rc = 0;
    for (unsigned i = 0; i < GPUFL__METRICS_PARTS && rc == 0; i++) {
        const gpufl__bytebuf *src = om ? &s->om[i] : &s->text[i];
        rc = gpufl__bytebuf_append(&body, src->p, src->len);
    }
    gpufl__metrics_counters counters = s->counters;
    pthread_mutex_unlock(&s->lock);
    rc = rc ? rc : gpufl__metrics_finish(&counters, om, &body);
    if (rc != 0) {
        respond(c, "500 Internal Server Error", "text/plain", "", "out of memory\n", 14);
    } else {
        respond(c, "200 OK",
                om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                   : "text/plain; version=0.0.4; charset=utf-8",
                "", body.p, body.len);
        if (head_only)
            c->out.len -= body.len;
    }
    gpufl__bytebuf_free(&body);
}

/* The head is complete (or full): parse its request line and answer. */
static void answer(gpufl__metrics_server *s, conn *c, bool complete)
{
    if (!complete) {
        respond_error(s, c, "431 Request Header Fields Too Large", "");
        return;
    }
    char *eol = strpbrk(c->head, "\r\n"); /* there is one: the head ends in an empty line */
    *eol = '\0';
    char method[16], target[1024], version[16];
    /* a request line is printable ASCII: anything else is not HTTP */
    for (const unsigned char *p = (const unsigned char *)c->head; *p; p++)
        if (*p < 0x20 || *p > 0x7e) {
            respond_error(s, c, "400 Bad Request", "");
            return;
        }
    if (sscanf(c->head, "%15s %1023s %15s", method, target, version) != 3 || strncmp(version, "HTTP/1.", 7) != 0) {
        respond_error(s, c, "400 Bad Request", "");
        return;
    }
    *eol = '\n'; /* headers are read below */
    bool get = !strcmp(method, "GET"), head = !strcmp(method, "HEAD");
    if (!get && !head) {
        respond_error(s, c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n");
        return;
    }
    char *query = strchr(target, '?');
    if (query)
        *query = '\0';
    if (!strcmp(target, "/metrics")) {
        answer_metrics(s, c, s->openmetrics || accepts_openmetrics(c->head), head);
    } else if (!strcmp(target, "/")) {
        static const char page[] = "<html><head><title>gpufl exporter</title></head><body><h1>gpufl exporter</h1>"
                                   "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";
        respond(c, "200 OK", "text/html; charset=utf-8", "", page, head ? 0 : sizeof page - 1);
    } else {
        respond_error(s, c, "404 Not Found", "");
    }
}

/* Reads what the peer sent; answers once the head is complete. */
static void conn_read(gpufl__metrics_server *s, conn *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, c->head + c->head_len, MAX_HEAD - c->head_len, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            conn_close(c);
            return;
        }
        if (n < 0)
            return;
        c->head_len += (size_t)n;
        c->head[c->head_len] = '\0';
        /* a NUL byte would hide the end of the head from strstr: not HTTP */
        if (memchr(c->head + c->head_len - (size_t)n, '\0', (size_t)n)) {
            respond_error(s, c, "400 Bad Request", "");
            return;
        }
        if (strstr(c->head, "\r\n\r\n") || strstr(c->head, "\n\n")) {
            answer(s, c, true);
            return;
        }
        if (c->head_len == MAX_HEAD) {
            answer(s, c, false);
            return;
        }
    }
}

static void conn_write(conn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (n <= 0)
            break;
        c->out_off += (size_t)n;
    }
    conn_close(c);
}

static void accept_all(gpufl__metrics_server *s, uint64_t now)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        conn *free_slot = NULL;
        for (int i = 0; i < MAX_CONN && !free_slot; i++)
            if (s->conns[i].fd < 0)
                free_slot = &s->conns[i];
        if (!free_slot) {
            /* every slot busy: closing at once keeps the others served */
            close(fd);
            pthread_mutex_lock(&s->lock);
            s->counters.rejected++;
            pthread_mutex_unlock(&s->lock);
            continue;
        }
        free_slot->fd = fd;
        free_slot->deadline_ns = now + CONN_DEADLINE_NS;
        free_slot->head_len = 0;
        free_slot->out_off = 0;
        free_slot->answering = false;
    }
}

static void *serve(void *arg)
{
    gpufl__metrics_server *s = arg;
    struct pollfd pfd[MAX_CONN + 2];
    int slot[MAX_CONN + 2];
    for (;;) {
        uint64_t now = now_ns(), next = now + 1000000000ull;
        int n = 0;
        pfd[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
        for (int i = 0; i < MAX_CONN; i++) {
            conn *c = &s->conns[i];
            if (c->fd < 0)
                continue;
            if (now >= c->deadline_ns) {
                /* counted first: whoever sees the close sees the count */
                pthread_mutex_lock(&s->lock);
                s->counters.timeouts++;
                pthread_mutex_unlock(&s->lock);
                conn_close(c);
                continue;
            }
            if (c->deadline_ns < next)
                next = c->deadline_ns;
            slot[n] = i;
            pfd[n++] = (struct pollfd){.fd = c->fd, .events = c->answering ? POLLOUT : POLLIN};
        }
        int timeout_ms = (int)((next - now) / 1000000u) + 1;
        if (poll(pfd, (nfds_t)n, timeout_ms) < 0 && errno != EINTR)
            continue;
        if (pfd[0].revents)
            return NULL;
        now = now_ns();
        for (int k = 2; k < n; k++) {
            conn *c = &s->conns[slot[k]];
            if (!pfd[k].revents)
                continue;
            if (!c->answering)
                conn_read(s, c);
            if (c->fd >= 0 && c->answering)
                conn_write(c);
        }
        if (pfd[1].revents)
            accept_all(s, now);
    }
}

/* ---- lifecycle ------------------------------------------------------------ */

int gpufl__metrics_server_start(const char *addr, bool openmetrics, gpufl__metrics_server **out, char *err,
                                size_t err_len)
{
    *out = NULL;
    gpufl__metrics_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "out of memory");
        return GPUFL_ENOMEM;
    }
    s->openmetrics = openmetrics;
    s->listen_fd = -1;
    for (int i = 0; i < MAX_CONN; i++)
        s->conns[i].fd = -1;
    int rc = open_listener(s, addr, err, err_len);
    if (rc != 0) {
        free(s);
        return rc;
    }
    pthread_mutex_init(&s->lock, NULL);
    if (pipe2(s->wake, O_CLOEXEC) != 0 || pthread_create(&s->thread, NULL, serve, s) != 0) {
        snprintf(err, err_len, "cannot start the metrics server on %s: %s", addr, strerror(errno));
        close(s->listen_fd);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return GPUFL_EIO;
    }
    *out = s;
    return 0;
}

const char *gpufl__metrics_server_address(const gpufl__metrics_server *s) { return s->address; }

int gpufl__metrics_server_publish(gpufl__metrics_server *s, const void *text, size_t text_len, const void *om,
                                  size_t om_len)
{
    int rc = gpufl__metrics_server_publish_part(s, GPUFL__METRICS_PART_DEVICES, text, text_len, om, om_len);
    if (rc == 0) {
        pthread_mutex_lock(&s->lock);
        s->counters.samples++;
        pthread_mutex_unlock(&s->lock);
    }
    return rc;
}

int gpufl__metrics_server_publish_part(gpufl__metrics_server *s, unsigned part, const void *text, size_t text_len,
                                       const void *om, size_t om_len)
{
    if (part >= GPUFL__METRICS_PARTS)
        return GPUFL_EINVAL;
    gpufl__bytebuf t = {0}, o = {0};
    if (gpufl__bytebuf_append(&t, text, text_len) != 0 || gpufl__bytebuf_append(&o, om, om_len) != 0) {
        gpufl__bytebuf_free(&t);
        gpufl__bytebuf_free(&o);
        return GPUFL_ENOMEM;
    }
    /* swap under the lock; the old copies are freed outside it */
    pthread_mutex_lock(&s->lock);
    gpufl__bytebuf old_t = s->text[part], old_o = s->om[part];
    s->text[part] = t;
    s->om[part] = o;
    pthread_mutex_unlock(&s->lock);
    gpufl__bytebuf_free(&old_t);
    gpufl__bytebuf_free(&old_o);
    return 0;
}

void gpufl__metrics_server_counters(gpufl__metrics_server *s, gpufl__metrics_counters *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->counters;
    pthread_mutex_unlock(&s->lock);
}

void gpufl__metrics_server_stop(gpufl__metrics_server *s)
{
    if (!s)
        return;
    ssize_t w = write(s->wake[1], "x", 1);
    (void)w;
    pthread_join(s->thread, NULL);
    for (int i = 0; i < MAX_CONN; i++)
        if (s->conns[i].fd >= 0)
            conn_close(&s->conns[i]);
    close(s->listen_fd);
    close(s->wake[0]);
    close(s->wake[1]);
    pthread_mutex_destroy(&s->lock);
    for (unsigned i = 0; i < GPUFL__METRICS_PARTS; i++) {
        gpufl__bytebuf_free(&s->text[i]);
        gpufl__bytebuf_free(&s->om[i]);
    }
    free(s);
}
