/*
 * job.digest (job_digest_file.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/ana_job_digest_file.h"
#include "core/crc32c.h"

#define MAGIC "GFLJOBD1"
#define VERSION 2u /* 2: NCCL bytes (coll bytes, has_bytes, api_coll, nranks; nccl_recorded, bytes_note) */

/* What a session's files are now: names, sizes and modification times. */
static uint64_t fingerprint(const char *dir)
{
    uint64_t h = 1469598103934665603ull;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p ||
            stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        uint64_t f = 1469598103934665603ull; /* per file, summed: readdir's order does not matter */
        for (const char *c = e->d_name; *c; c++)
            f = (f ^ (uint8_t)*c) * 1099511628211ull;
        f = (f ^ (uint64_t)st.st_size) * 1099511628211ull;
        f = (f ^ ((uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec)) * 1099511628211ull;
        h += f;
    }
    closedir(d);
    return h;
}

/* ---- writing ------------------------------------------------------------ */

typedef struct wbuf {
    FILE *f;
    uint32_t crc;
    bool failed;
} wbuf;

static void put(wbuf *w, const void *p, size_t n)
{
    if (!n || w->failed)
        return;
    w->crc = gpufl__crc32c(w->crc, p, n);
    if (fwrite(p, 1, n, w->f) != n)
        w->failed = true;
}

static void put_u64(wbuf *w, uint64_t v) { put(w, &v, sizeof v); }

static void put_str(wbuf *w, const char *s)
{
    uint32_t n = (uint32_t)strlen(s ? s : "");
    put(w, &n, sizeof n);
    put(w, s, n);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void put_rank(wbuf *w, const gpufl__job_rank *r, uint64_t print)
{
    put_str(w, base_name(r->path));
    put_u64(w, print);
    put_str(w, r->host);
    put_str(w, r->job_id);
    put_str(w, r->launcher);
    put_str(w, r->session_id);
    int64_t ids[3] = {r->rank, r->local_rank, r->world_size};
    put(w, ids, sizeof ids);
    put(w, &r->pid, sizeof r->pid);
    uint64_t v[15] = {r->start_ns,
                      r->end_ns,
                      r->start_wall_ns,
                      r->has_mono,
                      (uint64_t)r->mono_offset_ns,
                      (uint64_t)r->wall_offset_ns,
                      r->clock_uncertainty_ns,
                      r->ntp_maxerror_ns,
                      r->ntp_synchronised,
                      r->kernels,
                      r->nccl_kernels,
                      r->busy_ns,
                      r->comm_ns,
                      r->compute_ns,
                      r->overlap_ns};
    put(w, v, sizeof v);
    put_u64(w, r->span_ns);
    put_u64(w, r->ncoll);
    put(w, r->coll, r->ncoll * sizeof *r->coll);
    put_u64(w, r->nccl_recorded);
    put(w, &r->bytes_note, sizeof r->bytes_note);
    put_u64(w, r->nkt);
    put(w, r->kt, r->nkt * sizeof *r->kt);
    put_u64(w, r->nsteps);
    put(w, r->steps, r->nsteps * sizeof *r->steps);
    put(w, &r->step_name, sizeof r->step_name);
    put_u64(w, r->nstr);
    for (size_t i = 0; i < r->nstr; i++)
        put_str(w, r->str[i]);
}

int gpufl__job_digest_write(const char *job_dir, const gpufl__job_rank *ranks, size_t n, char *err, size_t err_len)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    snprintf(path, sizeof path, "%s/job.digest", job_dir);
    snprintf(tmp, sizeof tmp, "%s/.job.digest.tmp", job_dir);
    wbuf w = {.f = fopen(tmp, "we")};
    if (!w.f) {
        snprintf(err, err_len, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    put(&w, MAGIC, 8);
    uint32_t head[5] = {VERSION, sizeof(gpufl__job_coll), sizeof(gpufl__job_kernel_time), sizeof(gpufl__job_step),
                        (uint32_t)n};
    put(&w, head, sizeof head);
    for (size_t i = 0; i < n; i++)
        put_rank(&w, &ranks[i], fingerprint(ranks[i].path));
    uint32_t crc = w.crc;
    if (!w.failed && fwrite(&crc, sizeof crc, 1, w.f) != 1)
        w.failed = true;
    if (fclose(w.f) != 0 || w.failed || rename(tmp, path) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct rbuf {
    const uint8_t *p, *end;
    bool bad;
} rbuf;

static void get(rbuf *r, void *out, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p, n);
    r->p += n;
}

static uint64_t get_u64(rbuf *r)
{
    uint64_t v;
    get(r, &v, sizeof v);
    return v;
}

static char *get_str(rbuf *r)
{
    uint32_t n;
    get(r, &n, sizeof n);
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = true;
        return NULL;
    }
    memcpy(s, r->p, n);
    s[n] = '\0';
    r->p += n;
    return s;
}

/* An array of count elements of size bytes; NULL for none or on damage. */
static void *get_array(rbuf *r, size_t *count, size_t size)
{
    uint64_t n = get_u64(r);
    *count = 0;
    if (r->bad || n > (uint64_t)(r->end - r->p) / size) {
        r->bad = true;
        return NULL;
    }
    if (!n)
        return NULL;
    void *a = malloc((size_t)n * size);
    if (!a) {
        r->bad = true;
        return NULL;
    }
    get(r, a, (size_t)n * size);
    *count = (size_t)n;
    return a;
}

/* One rank; false when damaged or its session changed since. */
static bool get_rank(rbuf *b, const char *job_dir, gpufl__job_rank *r, char *err, size_t err_len)
{
    char *name = get_str(b);
    uint64_t print = get_u64(b);
    if (!name || b->bad || strchr(name, '/') || !strcmp(name, "..") || !*name) {
        free(name);
        b->bad = true;
        return false;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", job_dir, name);
    free(name);
    if (fingerprint(path) != print) {
        snprintf(err, err_len, "%s changed after the merge", path);
        return false;
    }
    r->path = strdup(path);
    r->host = get_str(b);
    r->job_id = get_str(b);
    r->launcher = get_str(b);
    r->session_id = get_str(b);
    int64_t ids[3];
    get(b, ids, sizeof ids);
    r->rank = ids[0];
    r->local_rank = ids[1];
    r->world_size = ids[2];
    get(b, &r->pid, sizeof r->pid);
    uint64_t v[15];
    get(b, v, sizeof v);
    r->start_ns = v[0], r->end_ns = v[1], r->start_wall_ns = v[2], r->has_mono = v[3] != 0;
    r->mono_offset_ns = (int64_t)v[4], r->wall_offset_ns = (int64_t)v[5], r->clock_uncertainty_ns = v[6];
    r->ntp_maxerror_ns = v[7], r->ntp_synchronised = v[8] != 0, r->kernels = v[9], r->nccl_kernels = v[10];
    r->busy_ns = v[11], r->comm_ns = v[12], r->compute_ns = v[13], r->overlap_ns = v[14];
    r->span_ns = get_u64(b);
    r->coll = get_array(b, &r->ncoll, sizeof *r->coll);
    r->nccl_recorded = get_u64(b);
    get(b, &r->bytes_note, sizeof r->bytes_note);
    r->kt = get_array(b, &r->nkt, sizeof *r->kt);
    r->steps = get_array(b, &r->nsteps, sizeof *r->steps);
    get(b, &r->step_name, sizeof r->step_name);
    uint64_t nstr = get_u64(b);
    if (b->bad || nstr == 0 || nstr > (uint64_t)(b->end - b->p) / 4 ||
        !(r->str = calloc((size_t)nstr, sizeof *r->str))) {
        b->bad = true;
        return false;
    }
    r->nstr = (size_t)nstr;
    for (size_t i = 0; i < r->nstr && !b->bad; i++)
        r->str[i] = get_str(b);
    bool ok = !b->bad && r->path && r->host && r->job_id && r->launcher && r->session_id && r->step_name < r->nstr &&
              r->bytes_note < r->nstr;
    /* string numbers point into the table */
    for (size_t i = 0; ok && i < r->nkt; i++)
        ok = r->kt[i].name < r->nstr;
    for (size_t i = 0; ok && i < r->ncoll; i++)
        ok = r->coll[i].last_kernel < r->nstr;
    if (!ok)
        b->bad = true;
    return ok;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            size_t want = cap ? cap * 2 : 1 << 20;
            uint8_t *q = realloc(buf, want);
            if (!q) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = q;
            cap = want;
        }
        size_t got = fread(buf + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return buf;
}

bool gpufl__job_digest_read(const char *job_dir, gpufl__job_rank **ranks, size_t *n, char *err, size_t err_len)
{
    *ranks = NULL;
    *n = 0;
    err[0] = '\0';
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/job.digest", job_dir);
    size_t len = 0;
    uint8_t *buf = slurp(path, &len);
    if (!buf)
        return false;
    uint32_t crc = 0, head[5] = {0};
    if (len >= 8 + sizeof head + sizeof crc)
        memcpy(&crc, buf + len - sizeof crc, sizeof crc);
    rbuf b = {buf + 8, buf + len - sizeof crc, false};
    if (len < 8 + sizeof head + sizeof crc || memcmp(buf, MAGIC, 8) != 0 ||
        gpufl__crc32c(0, buf, len - sizeof crc) != crc) {
        snprintf(err, err_len, "%s is damaged", path);
        free(buf);
        return false;
    }
    get(&b, head, sizeof head);
    if (head[0] != VERSION || head[1] != sizeof(gpufl__job_coll) || head[2] != sizeof(gpufl__job_kernel_time) ||
        head[3] != sizeof(gpufl__job_step) || head[4] == 0) {
        snprintf(err, err_len, "%s is of another gpufl", path);
        free(buf);
        return false;
    }
    gpufl__job_rank *r = calloc(head[4], sizeof *r);
    size_t got = 0;
    bool ok = r != NULL;
    for (; ok && got < head[4]; got++)
        ok = get_rank(&b, job_dir, &r[got], err, err_len) && !b.bad;
    if (!ok || b.p != b.end) {
        if (!err[0])
            snprintf(err, err_len, "%s is damaged", path);
        for (size_t i = 0; r && i < head[4]; i++)
            gpufl__job_rank_free(&r[i]);
        free(r);
        free(buf);
        return false;
    }
    free(buf);
    *ranks = r;
    *n = head[4];
    return true;
}
