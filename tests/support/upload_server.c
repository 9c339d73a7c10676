/*
 * The uploader's test server (upload_server.h).
 */
#include "upload_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_SCRIPT 64
#define MAX_PLACES (1u << 20)

typedef struct place {
    char *line;
    int sent;
} place;

typedef struct chan {
    char session[128];
    char channel[16];
    place *p;
    size_t n; /* highest place + 1 */
} chan;

struct upload_server {
    int fd, port;
    char url[64];
    char key[256];
    pthread_t thread;
    volatile int stop;
    pthread_mutex_t mu;
    struct {
        char suffix[64];
        us_action_kind kind;
        int status;
        size_t nth, seen;
        bool used;
    } script[MAX_SCRIPT];
    size_t nscript;
    size_t max_lines;
    char announced[32][128];
    size_t nannounced;
    us_request *req;
    size_t nreq;
    chan *ch;
    size_t nch;
};

static void die(const char *what)
{
    fprintf(stderr, "upload_server: %s: %s\n", what, strerror(errno));
    abort();
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Reads until the end of the header block; returns its length (the body
 * begins after it) or -1. buf gets NUL-terminated. */
static ssize_t read_head(int c, char *buf, size_t cap, size_t *got)
{
    *got = 0;
    while (*got + 1 < cap) {
        ssize_t n = read(c, buf + *got, cap - 1 - *got);
        if (n <= 0)
            return -1;
        *got += (size_t)n;
        buf[*got] = 0;
        char *e = strstr(buf, "\r\n\r\n");
        if (e)
            return e + 4 - buf;
    }
    return -1;
}

static const char *find_header(const char *head, const char *name, char *out, size_t len)
{
    out[0] = 0;
    size_t nl = strlen(name);
    for (const char *l = strstr(head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
        const char *h = l + 2;
        if (!strncasecmp(h, name, nl) && h[nl] == ':') {
            h += nl + 1;
            while (*h == ' ')
                h++;
            const char *e = strstr(h, "\r\n");
            size_t n = e ? (size_t)(e - h) : strlen(h);
            snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), h);
            return out;
        }
    }
    return out;
}

static char *gunzip(const unsigned char *in, size_t n, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return NULL;
    size_t cap = n * 8 + 1024, len = 0;
    char *out = malloc(cap + 1);
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    int rc;
    do {
        if (cap - len < 65536) {
            cap *= 2;
            out = realloc(out, cap + 1);
        }
        z.next_out = (unsigned char *)out + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = z.total_out;
    } while (rc == Z_OK);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    out[len] = 0;
    *out_len = len;
    return out;
}

static chan *chan_of(upload_server *s, const char *session, const char *channel, bool make)
{
    for (size_t i = 0; i < s->nch; i++)
        if (!strcmp(s->ch[i].session, session) && !strcmp(s->ch[i].channel, channel))
            return &s->ch[i];
    if (!make)
        return NULL;
    s->ch = realloc(s->ch, (s->nch + 1) * sizeof *s->ch);
    chan *c = &s->ch[s->nch++];
    memset(c, 0, sizeof *c);
    snprintf(c->session, sizeof c->session, "%s", session);
    snprintf(c->channel, sizeof c->channel, "%s", channel);
    c->p = calloc(MAX_PLACES, sizeof *c->p);
    return c;
}

static bool announced(upload_server *s, const char *id)
{
    for (size_t i = 0; i < s->nannounced; i++)
        if (!strcmp(s->announced[i], id))
            return true;
    return false;
}

/* The answer to a request the script left alone: status and body. */
static int handle(upload_server *s, const us_request *r, char *out, size_t len)
{
    char auth[512], id[256], ch[64], seq[64];
    char want[300];
    snprintf(want, sizeof want, "Bearer %s", s->key);
    if (strcmp(find_header(r->headers, "Authorization", auth, sizeof auth), want) != 0) {
        snprintf(out, len, "{\"error\":\"unknown key\"}");
        return 401;
    }
    const char *p = strstr(r->path, "/api/v1") == r->path ? r->path + 7 : NULL;
    if (!p) {
        snprintf(out, len, "{\"error\":\"no such path\"}");
        return 404;
    }
    if (!strcmp(p, "/sessions")) {
        json_t *j = json_loadb(r->body, r->body_len, 0, NULL);
        const char *sid = json_string_value(json_object_get(j, "session_id"));
        if (!sid) {
            json_decref(j);
            snprintf(out, len, "{\"error\":\"no session_id\"}");
            return 400;
        }
        bool created = !announced(s, sid);
        if (created && s->nannounced < 32)
            snprintf(s->announced[s->nannounced++], 128, "%s", sid);
        snprintf(out, len, "{\"session_id\":\"%s\",\"created\":%s}", sid, created ? "true" : "false");
        json_decref(j);
        return 200;
    }
    if (!strcmp(p, "/events/stream")) {
        find_header(r->headers, "X-GpuFlight-Session-Id", id, sizeof id);
        find_header(r->headers, "X-Gpufl-Channel", ch, sizeof ch);
        find_header(r->headers, "X-Gpufl-First-Seq", seq, sizeof seq);
        if (!id[0] || !ch[0] || !seq[0]) {
            snprintf(out, len, "{\"error\":\"missing header\"}");
            return 400;
        }
        if (!announced(s, id)) {
            snprintf(out, len, "{\"error\":\"unknown session\"}");
            return 404;
        }
        size_t lines = 0;
        for (size_t i = 0; i < r->body_len; i++)
            lines += r->body[i] == '\n';
        if (s->max_lines && lines > s->max_lines) {
            snprintf(out, len, "{\"error\":\"too large\"}");
            return 413;
        }
        chan *c = chan_of(s, id, ch, true);
        size_t place = strtoull(seq, NULL, 10), acc = 0, dup = 0, rej = 0;
        for (const char *l = r->body; *l; place++) {
            const char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            json_t *j = json_loadb(l, n, 0, NULL);
            if (!json_is_object(j) || !json_string_value(json_object_get(j, "type"))) {
                rej++;
            } else if (place < MAX_PLACES) {
                if (c->p[place].sent++)
                    dup++;
                else
                    acc++, c->p[place].line = strndup(l, n);
                if (place + 1 > c->n)
                    c->n = place + 1;
            }
            json_decref(j);
            l = e ? e + 1 : l + n;
        }
        snprintf(out, len, "{\"accepted\":%zu,\"duplicates\":%zu,\"rejected\":%zu,\"errors\":[]}", acc, dup, rej);
        return 200;
    }
    if (!strcmp(p, "/events/session-complete")) {
        json_t *j = json_loadb(r->body, r->body_len, 0, NULL);
        const char *sid = json_string_value(json_object_get(j, "session_id"));
        json_t *ev = json_object_get(j, "events");
        bool whole = sid != NULL;
        const char *names[] = {"device", "scope", "system"};
        for (int k = 0; whole && k < 3; k++) {
            size_t n = (size_t)json_integer_value(json_object_get(ev, names[k]));
            chan *c = chan_of(s, sid, names[k], false);
            for (size_t i = 0; whole && i < n; i++)
                whole = c && i < c->n && c->p[i].sent;
        }
        snprintf(out, len, "{\"session_id\":\"%s\",\"stored\":{},\"complete\":%s}", sid ? sid : "",
                 whole ? "true" : "false");
        json_decref(j);
        return 200;
    }
    snprintf(out, len, "{\"error\":\"no such path\"}");
    return 404;
}

static void serve_one(upload_server *s, int c)
{
    char head[16384];
    size_t got;
    ssize_t hl = read_head(c, head, sizeof head, &got);
    if (hl < 0)
        return;
    char cl[32], enc[32];
    size_t blen = strtoull(find_header(head, "Content-Length", cl, sizeof cl), NULL, 10);
    us_request r = {0};
    sscanf(head, "%*s %255s", r.path);
    r.t_ns = now_ns();
    r.headers = strndup(head, (size_t)hl);
    pthread_mutex_lock(&s->mu);
    int act = -1;
    for (size_t i = 0; i < s->nscript; i++) {
        size_t sl = strlen(s->script[i].suffix), pl = strlen(r.path);
        if (!s->script[i].used && pl >= sl && !strcmp(r.path + pl - sl, s->script[i].suffix) &&
            s->script[i].seen++ == s->script[i].nth && act < 0) {
            s->script[i].used = true;
            act = (int)i;
        }
    }
    pthread_mutex_unlock(&s->mu);
    unsigned char *body = malloc(blen + 1);
    size_t have = got - (size_t)hl;
    memcpy(body, head + hl, have);
    size_t want = act >= 0 && s->script[act].kind == US_CUT_BODY ? blen / 2 : blen;
    while (have < want) {
        ssize_t n = read(c, body + have, want - have);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    char ans[512];
    int status = 0;
    if (act >= 0 && s->script[act].kind == US_CUT_BODY) {
        r.status = 0; /* cut: nothing decoded, nothing stored */
    } else {
        find_header(head, "Content-Encoding", enc, sizeof enc);
        if (!strcasecmp(enc, "gzip"))
            r.body = gunzip(body, have, &r.body_len);
        else
            r.body = strndup((char *)body, have), r.body_len = have;
        pthread_mutex_lock(&s->mu);
        if (act >= 0 && s->script[act].kind == US_STATUS) {
            status = s->script[act].status;
            snprintf(ans, sizeof ans, "{\"error\":\"scripted\"}");
        } else if (!r.body) {
            status = 400;
            snprintf(ans, sizeof ans, "{\"error\":\"not gzip\"}");
        } else {
            status = handle(s, &r, ans, sizeof ans);
        }
        pthread_mutex_unlock(&s->mu);
        if (act >= 0 && s->script[act].kind == US_STORE_AND_CUT)
            status = 0;
        r.status = status;
    }
    free(body);
    /* recorded before the answer goes out: the client may look as soon as it has it */
    pthread_mutex_lock(&s->mu);
    s->req = realloc(s->req, (s->nreq + 1) * sizeof *s->req);
    s->req[s->nreq++] = r;
    pthread_mutex_unlock(&s->mu);
    if (status) {
        char out[1024];
        int n = snprintf(out, sizeof out,
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: "
                         "close\r\n\r\n%s",
                         status, strlen(ans), ans);
        if (write(c, out, (size_t)n) != n) {
        }
    }
}

static void *loop(void *arg)
{
    upload_server *s = arg;
    while (!s->stop) {
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0)
            continue;
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        serve_one(s, c);
        shutdown(c, SHUT_RDWR);
        close(c);
    }
    return NULL;
}

upload_server *us_start(const char *key)
{
    upload_server *s = calloc(1, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->fd, 16) != 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &al) != 0)
        die("bind");
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
    if (pthread_create(&s->thread, NULL, loop, s) != 0)
        die("pthread_create");
    return s;
}

int us_port(const upload_server *s) { return s->port; }
const char *us_url(const upload_server *s) { return s->url; }

void us_stop(upload_server *s)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    close(s->fd);
    for (size_t i = 0; i < s->nreq; i++) {
        free(s->req[i].headers);
        free(s->req[i].body);
    }
    free(s->req);
    for (size_t i = 0; i < s->nch; i++) {
        for (size_t k = 0; k < s->ch[i].n; k++)
            free(s->ch[i].p[k].line);
        free(s->ch[i].p);
    }
    free(s->ch);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void us_script(upload_server *s, const char *path_suffix, size_t nth, us_action_kind kind, int status)
{
    pthread_mutex_lock(&s->mu);
    if (s->nscript < MAX_SCRIPT) {
        snprintf(s->script[s->nscript].suffix, sizeof s->script[0].suffix, "%s", path_suffix);
        s->script[s->nscript].kind = kind;
        s->script[s->nscript].status = status;
        s->script[s->nscript].used = false;
        s->script[s->nscript].nth = nth;
        s->script[s->nscript].seen = 0;
        s->nscript++;
    }
    pthread_mutex_unlock(&s->mu);
}

void us_max_lines(upload_server *s, size_t n) { s->max_lines = n; }

void us_forget_sessions(upload_server *s)
{
    pthread_mutex_lock(&s->mu);
    s->nannounced = 0;
    pthread_mutex_unlock(&s->mu);
}

size_t us_nrequests(upload_server *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->nreq;
    pthread_mutex_unlock(&s->mu);
    return n;
}

const us_request *us_request_at(upload_server *s, size_t i) { return i < s->nreq ? &s->req[i] : NULL; }

const char *us_header(upload_server *s, size_t i, const char *name, char *buf, size_t len)
{
    return find_header(s->req[i].headers, name, buf, len);
}

size_t us_places(upload_server *s, const char *session, const char *channel)
{
    chan *c = chan_of(s, session, channel, false);
    return c ? c->n : 0;
}

const char *us_line(upload_server *s, const char *session, const char *channel, size_t place, int *sent)
{
    chan *c = chan_of(s, session, channel, false);
    *sent = c && place < c->n ? c->p[place].sent : 0;
    return c && place < c->n ? c->p[place].line : NULL;
}
