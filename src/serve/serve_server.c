/*
 * The server's threads (serve_server.h): the caller's thread runs the
 * poller, which owns the listening socket and every parked connection;
 * workers own a connection from the moment the poller queues it until
 * they park it again or close it. A connection's state and the list of
 * all connections are guarded by one mutex; the queue by another.
 */
#include "serve/serve_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "core/listen_address.h"
#include "gpufl/gpufl.h"
#include "serve/serve_api.h"
#include "serve/serve_conn.h"
#include "serve/serve_db.h"
#include "serve/serve_http.h"
#include "serve/serve_migrate.h"

#define MAX_CONN 1024
#define REQUEST_NS (60ull * 1000000000ull)   /* a request whole, from its first byte */
#define ANSWER_NS (30ull * 1000000000ull)    /* the answer taken */
#define IDLE_NS (60ull * 1000000000ull)      /* a keep-alive connection with nothing to say */
#define HANDSHAKE_NS (10ull * 1000000000ull) /* TLS */

enum { PARKED = 0, BUSY = 1 };

typedef struct server {
    const gpufl__serve_config *cfg;
    SSL_CTX *tls;
    int listen_fd, epfd;
    pthread_mutex_t lock; /* conns, nconns, every conn's state */
    gpufl__serve_conn *conns;
    unsigned nconns;
    pthread_mutex_t qlock; /* the queue and stopping */
    pthread_cond_t qcond;
    gpufl__serve_conn *queue[MAX_CONN];
    unsigned qhead, qlen;
    bool stopping;
} server;

typedef struct worker {
    server *s;
    pthread_t thread;
    gpufl__serve_counts counts;
} worker;

/* ---- listening ------------------------------------------------------------ */

static int open_listener(const char *addr, char *where, size_t where_len, char *why, size_t why_len)
{
    int fd;
    return gpufl__listen_tcp(addr, 512, &fd, where, where_len, why, why_len) == 0 ? fd : -1;
}

static SSL_CTX *tls_context(const gpufl__serve_config *cfg, char *why, size_t why_len)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        snprintf(why, why_len, "cannot set up TLS (OpenSSL)");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const char *bad = NULL, *flag = NULL;
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert) != 1)
        bad = cfg->tls_cert, flag = "--tls-cert";
    else if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key, SSL_FILETYPE_PEM) != 1)
        bad = cfg->tls_key, flag = "--tls-key";
    if (!bad && SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(why, why_len, "--tls-key %s is not the key of --tls-cert %s", cfg->tls_key, cfg->tls_cert);
        ERR_clear_error();
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (bad) {
        char e[256];
        ERR_error_string_n(ERR_get_error(), e, sizeof e);
        ERR_clear_error();
        snprintf(why, why_len, "cannot use %s %s (a PEM file; a key must be the certificate's): %s", flag, bad, e);
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* ---- connections ---------------------------------------------------------- */

static void list_add(server *s, gpufl__serve_conn *c)
{
    c->prev = NULL;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
}

static void list_remove(server *s, gpufl__serve_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
}

/* Closes c, which the caller owns (busy, or parked and found idle by the poller). */
static void conn_close(server *s, gpufl__serve_conn *c)
{
    pthread_mutex_lock(&s->lock);
    list_remove(s, c);
    pthread_mutex_unlock(&s->lock);
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    gpufl__serve_conn_free(c);
}

static void enqueue(server *s, gpufl__serve_conn *c)
{
    pthread_mutex_lock(&s->qlock);
    s->queue[(s->qhead + s->qlen++) % MAX_CONN] = c; /* a connection is queued at most once: never full */
    pthread_cond_signal(&s->qcond);
    pthread_mutex_unlock(&s->qlock);
}

/* Gives c back to the poller until it has more to say. */
static void park(server *s, gpufl__serve_conn *c)
{
    pthread_mutex_lock(&s->lock);
    c->state = PARKED;
    c->idle_since_ns = gpufl__serve_now_ns();
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c};
    int rc = epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        c->state = BUSY;
        conn_close(s, c);
    }
}

/* ---- workers -------------------------------------------------------------- */

static void answer_status(gpufl__serve_conn *c, int status)
{
    char body[160];
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\"}", gpufl__serve_status_text(status));
    if (gpufl__serve_respond(c, status, body, (size_t)n, false, gpufl__serve_now_ns() + ANSWER_NS) != 0)
        return; /* the client is gone */
}

/* Serves one request of c; true when c stays open. */
static bool serve_one(server *s, gpufl__serve_db *db, gpufl__serve_conn *c, gpufl__serve_counts *counts)
{
    uint64_t now = gpufl__serve_now_ns();
    if (gpufl__serve_conn_handshake(c, now + HANDSHAKE_NS) != 0)
        return false;
    gpufl__serve_request req;
    int rc = gpufl__serve_read_request(c, &req, now + REQUEST_NS);
    if (rc == 1 || rc < 0)
        return false;
    if (rc > 0) {
        answer_status(c, rc);
        return false;
    }
    gpufl__serve_answer a = {0};
    gpufl__serve_api_answer(s->cfg->api_path, db, &req, &a, counts);
    bool keep = req.keep_alive;
    if (gpufl__serve_respond(c, a.status, (const char *)a.body.p, a.body.len, keep,
                             gpufl__serve_now_ns() + ANSWER_NS) != 0)
        keep = false;
    gpufl__bytebuf_free(&a.body);
    gpufl__serve_request_done(c, &req);
    return keep;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    server *s = w->s;
    gpufl__serve_db *db = gpufl__serve_db_new(s->cfg->conninfo);
    for (;;) {
        pthread_mutex_lock(&s->qlock);
        while (!s->qlen && !s->stopping)
            pthread_cond_wait(&s->qcond, &s->qlock);
        if (s->stopping) {
            pthread_mutex_unlock(&s->qlock);
            break;
        }
        gpufl__serve_conn *c = s->queue[s->qhead];
        s->qhead = (s->qhead + 1) % MAX_CONN;
        s->qlen--;
        pthread_mutex_unlock(&s->qlock);
        if (!db || !serve_one(s, db, c, &w->counts))
            conn_close(s, c);
        else if (gpufl__serve_conn_pending(c))
            enqueue(s, c); /* the next request is already here */
        else
            park(s, c);
    }
    gpufl__serve_db_free(db);
    return NULL;
}

/* ---- the poller ------------------------------------------------------------- */

static void accept_all(server *s)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN: no more; anything else: try at the next wake-up */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&s->lock);
        bool full = s->nconns >= MAX_CONN;
        gpufl__serve_conn *c = full ? NULL : gpufl__serve_conn_new(fd, s->tls);
        if (c) {
            c->state = PARKED;
            c->idle_since_ns = gpufl__serve_now_ns();
            list_add(s, c);
            struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c};
            if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
                list_remove(s, c);
                gpufl__serve_conn_free(c);
            }
        } else {
            close(fd);
        }
        pthread_mutex_unlock(&s->lock);
    }
}

/* Closes parked connections idle past IDLE_NS. */
static void close_idle(server *s)
{
    uint64_t now = gpufl__serve_now_ns();
    pthread_mutex_lock(&s->lock);
    for (gpufl__serve_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == PARKED && now - c->idle_since_ns > IDLE_NS) {
            list_remove(s, c);
            epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
            gpufl__serve_conn_free(c);
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static void poll_loop(server *s, volatile sig_atomic_t *stop)
{
    struct epoll_event evs[64];
    uint64_t last_scan = gpufl__serve_now_ns();
    while (!*stop) {
        int n = epoll_wait(s->epfd, evs, 64, 500);
        for (int i = 0; i < n; i++) {
            gpufl__serve_conn *c = evs[i].data.ptr;
            if (!c) {
                accept_all(s);
                continue;
            }
            pthread_mutex_lock(&s->lock);
            c->state = BUSY; /* one-shot: disarmed until parked again */
            pthread_mutex_unlock(&s->lock);
            enqueue(s, c);
        }
        if (gpufl__serve_now_ns() - last_scan > 1000000000ull) {
            close_idle(s);
            last_scan = gpufl__serve_now_ns();
        }
    }
}

/* ---- start and stop ----------------------------------------------------------- */

static int migrate_at_start(const gpufl__serve_config *cfg, FILE *log)
{
    char why[512];
    int from = 0, to = 0, rc = gpufl__serve_migrate_db(cfg->conninfo, &from, &to, why, sizeof why);
    if (rc != 0) {
        fprintf(log, "gpufl serve: %s\n", why);
        return GPUFL_EIO;
    }
    if (from != to)
        fprintf(log, "gpufl serve: database schema migrated from version %d to %d\n", from, to);
    return 0;
}

int gpufl__serve_run(const gpufl__serve_config *cfg, volatile sig_atomic_t *stop, FILE *log)
{
    server s = {.cfg = cfg, .listen_fd = -1, .epfd = -1};
    char why[512], where[128];
    if (cfg->tls_cert && !(s.tls = tls_context(cfg, why, sizeof why))) {
        fprintf(log, "gpufl serve: %s\n", why);
        return GPUFL_EIO;
    }
    s.listen_fd = open_listener(cfg->listen, where, sizeof where, why, sizeof why);
    s.epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    bool up = s.listen_fd >= 0 && s.epfd >= 0 && epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.listen_fd, &lev) == 0;
    if (!up)
        fprintf(log, "gpufl serve: %s\n", s.listen_fd < 0 ? why : strerror(errno));
    /* the files and the address first: a mistake there is found without
     * touching the database */
    if (!up || migrate_at_start(cfg, log) != 0) {
        if (s.listen_fd >= 0)
            close(s.listen_fd);
        if (s.epfd >= 0)
            close(s.epfd);
        SSL_CTX_free(s.tls);
        return GPUFL_EIO;
    }
    pthread_mutex_init(&s.lock, NULL);
    pthread_mutex_init(&s.qlock, NULL);
    pthread_cond_init(&s.qcond, NULL);
    worker *ws = calloc(cfg->workers, sizeof *ws);
    unsigned started = 0;
    for (unsigned i = 0; ws && i < cfg->workers; i++) {
        ws[i].s = &s;
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0)
            break;
        started++;
    }
    int rc = 0;
    if (started == cfg->workers) {
        fprintf(log, "gpufl serve: listening on %s (%s, %u workers, API at %s)\n", where, s.tls ? "https" : "http",
                cfg->workers, cfg->api_path);
        fflush(log);
        poll_loop(&s, stop);
    } else {
        fprintf(log, "gpufl serve: cannot start %u worker threads\n", cfg->workers);
        rc = GPUFL_ENOMEM;
    }
    close(s.listen_fd);
    pthread_mutex_lock(&s.qlock);
    s.stopping = true;
    pthread_cond_broadcast(&s.qcond);
    pthread_mutex_unlock(&s.qlock);
    gpufl__serve_counts total = {0};
    for (unsigned i = 0; i < started; i++) {
        pthread_join(ws[i].thread, NULL);
        total.requests += ws[i].counts.requests;
        total.batches += ws[i].counts.batches;
        total.accepted += ws[i].counts.accepted;
        total.duplicates += ws[i].counts.duplicates;
        total.rejected += ws[i].counts.rejected;
        total.unauthorized += ws[i].counts.unauthorized;
        total.unavailable += ws[i].counts.unavailable;
    }
    free(ws);
    while (s.conns) {
        gpufl__serve_conn *c = s.conns;
        list_remove(&s, c);
        gpufl__serve_conn_free(c);
    }
    close(s.epfd);
    SSL_CTX_free(s.tls);
    pthread_cond_destroy(&s.qcond);
    pthread_mutex_destroy(&s.qlock);
    pthread_mutex_destroy(&s.lock);
    if (rc == 0)
        fprintf(log,
                "gpufl serve: stopped: %llu requests, %llu batches: %llu events stored, %llu duplicates, %llu lines "
                "rejected; %llu refused for the key, %llu while the database was away\n",
                (unsigned long long)total.requests, (unsigned long long)total.batches,
                (unsigned long long)total.accepted, (unsigned long long)total.duplicates,
                (unsigned long long)total.rejected, (unsigned long long)total.unauthorized,
                (unsigned long long)total.unavailable);
    return rc;
}
