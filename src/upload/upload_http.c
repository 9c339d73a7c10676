/*
 * HTTP POST through libcurl loaded at run time (upload_http.h).
 *
 * Only the handful of libcurl functions the uploader calls are looked up,
 * into one table, once per process. The easy handle stays open across a
 * client's requests so that they reuse one connection (and one TLS
 * handshake); options are set again for every request.
 */
#include "upload/upload_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

#ifdef GPUFL_HAVE_CURL
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>

/* The prototypes are curl.h's; the functions are reached only through
 * these pointers (no link-time reference to libcurl). */
static struct curl_api {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_init) *easy_init;
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
    char err[256]; /* why loading failed; "" when it worked */
} curl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_load(void)
{
    /* RTLD_LOCAL: libcurl's symbols stay out of the program's namespace */
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(curl.err, sizeof curl.err, "libcurl.so.4 not found: install libcurl4 (%s)", dlerror());
        return;
    }
    struct {
        void **slot;
        const char *name;
    } fns[] = {
        {(void **)&curl.global_init, "curl_global_init"},       {(void **)&curl.easy_init, "curl_easy_init"},
        {(void **)&curl.easy_setopt, "curl_easy_setopt"},       {(void **)&curl.easy_getinfo, "curl_easy_getinfo"},
        {(void **)&curl.easy_perform, "curl_easy_perform"},     {(void **)&curl.easy_cleanup, "curl_easy_cleanup"},
        {(void **)&curl.easy_strerror, "curl_easy_strerror"},   {(void **)&curl.slist_append, "curl_slist_append"},
        {(void **)&curl.slist_free_all, "curl_slist_free_all"},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        if (!(*fns[i].slot = dlsym(lib, fns[i].name))) {
            snprintf(curl.err, sizeof curl.err, "libcurl.so.4 has no %s: install a libcurl4 of 7.x or later",
                     fns[i].name);
            return; /* the library stays loaded: it may be in use elsewhere in the process */
        }
    }
    /* curl_global_init is not thread-safe before 7.84; once per process */
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        snprintf(curl.err, sizeof curl.err, "libcurl could not initialise (curl_global_init failed)");
}

struct gpufl__http {
    CURL *easy;
    gpufl__http_config cfg;
    char ca_file[4096];
    char errbuf[CURL_ERROR_SIZE];
};

int gpufl__http_open(const gpufl__http_config *cfg, gpufl__http **out, char *err, size_t err_len)
{
    *out = NULL;
    pthread_once(&curl_once, curl_load);
    if (curl.err[0]) {
        snprintf(err, err_len, "%s", curl.err);
        return GPUFL_EUNSUPPORTED;
    }
    gpufl__http *h = calloc(1, sizeof *h);
    if (!h || !(h->easy = curl.easy_init())) {
        free(h);
        snprintf(err, err_len, "out of memory starting libcurl");
        return GPUFL_ENOMEM;
    }
    h->cfg = *cfg;
    if (cfg->ca_file)
        snprintf(h->ca_file, sizeof h->ca_file, "%s", cfg->ca_file);
    *out = h;
    return 0;
}

static size_t keep_answer(char *p, size_t size, size_t n, void *arg)
{
    gpufl__http_answer *a = arg;
    size_t bytes = size * n, room = sizeof a->body - 1 - a->len;
    size_t take = bytes < room ? bytes : room;
    memcpy(a->body + a->len, p, take);
    a->len += take;
    a->body[a->len] = 0;
    return bytes; /* the rest is read and dropped: answers are small, only their start matters */
}

/* Every option of one request; false when libcurl refused one. */
static bool set_request(gpufl__http *h, const gpufl__http_request *req, struct curl_slist *hdrs,
                        gpufl__http_answer *ans)
{
    CURL *e = h->easy;
    long read_s = h->cfg.read_timeout_ms ? (long)((h->cfg.read_timeout_ms + 999) / 1000) : 0;
    bool ok = true;
    ok &= curl.easy_setopt(e, CURLOPT_URL, req->url) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_POST, 1L) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_POSTFIELDS, req->body) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_HTTPHEADER, hdrs) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, keep_answer) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_WRITEDATA, ans) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf) == CURLE_OK;
    /* no SIGALRM for name lookups: this runs inside someone else's program */
    ok &= curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK;
    if (h->ca_file[0])
        ok &= curl.easy_setopt(e, CURLOPT_CAINFO, h->ca_file) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)h->cfg.connect_timeout_ms) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms) == CURLE_OK;
    /* a read timeout: under 1 byte a second for read_s seconds */
    ok &= curl.easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, read_s ? 1L : 0L) == CURLE_OK;
    ok &= curl.easy_setopt(e, CURLOPT_LOW_SPEED_TIME, read_s) == CURLE_OK;
    return ok;
}

int gpufl__http_post(gpufl__http *h, const gpufl__http_request *req, gpufl__http_answer *ans, char *err, size_t err_len)
{
    memset(ans, 0, sizeof *ans);
    struct curl_slist *hdrs = NULL;
    /* "Expect:" off: curl would wait up to a second for a 100 Continue that
     * small servers never send */
    hdrs = curl.slist_append(hdrs, "Expect:");
    for (size_t i = 0; hdrs && i < req->nheaders; i++) {
        struct curl_slist *n = curl.slist_append(hdrs, req->headers[i]);
        if (!n) {
            curl.slist_free_all(hdrs);
            hdrs = NULL;
        }
        hdrs = n;
    }
    if (!hdrs) {
        snprintf(err, err_len, "out of memory building the request to %s", req->url);
        return GPUFL_ENOMEM;
    }
    h->errbuf[0] = 0;
    int rc = 0;
    if (!set_request(h, req, hdrs, ans)) {
        snprintf(err, err_len, "libcurl refused an option of the request to %s", req->url);
        rc = GPUFL_EIO;
    } else {
        CURLcode c = curl.easy_perform(h->easy);
        if (c != CURLE_OK) {
            snprintf(err, err_len, "%s: %s%s%s", req->url, curl.easy_strerror(c), h->errbuf[0] ? ": " : "", h->errbuf);
            rc = GPUFL_EIO;
        } else {
            curl.easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &ans->status);
        }
    }
    /* the list held the Authorization header: drop every pointer to it */
    curl.easy_setopt(h->easy, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl.slist_free_all(hdrs);
    return rc;
}

void gpufl__http_close(gpufl__http *h)
{
    if (!h)
        return;
    curl.easy_cleanup(h->easy);
    free(h);
}

#else /* no curl.h at configure time */

int gpufl__http_open(const gpufl__http_config *cfg, gpufl__http **out, char *err, size_t err_len)
{
    (void)cfg;
    *out = NULL;
    snprintf(err, err_len,
             "this gpufl was built without libcurl's header (curl/curl.h): install libcurl4-openssl-dev and "
             "build again to upload");
    return GPUFL_EUNSUPPORTED;
}

int gpufl__http_post(gpufl__http *h, const gpufl__http_request *req, gpufl__http_answer *ans, char *err, size_t err_len)
{
    (void)h;
    (void)req;
    memset(ans, 0, sizeof *ans);
    snprintf(err, err_len, "built without libcurl");
    return GPUFL_EUNSUPPORTED;
}

void gpufl__http_close(gpufl__http *h) { (void)h; }

#endif
