/*
 * gfl_cubins (see cubin_store.h): a growing array searched by CRC. A
 * process loads tens to a few thousand modules, and lookups come from the
 * line cache's misses only (pc_sampling.c), so a linear search is enough.
 */
#include "backend/cupti/cubin_store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"

typedef struct cubin {
    uint64_t crc;
    void *data;
    size_t size;
} cubin;

static struct {
    pthread_mutex_t lock;
    const gfl_cupti_api *api;
    void (*log)(int level, const char *message);
    void (*note_file)(const char *path);
    cubin *v;
    size_t n, cap, bytes;
    bool full_said;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

void gfl_cubins_init(const gfl_cupti_api *api, void (*log)(int level, const char *message),
                     void (*note_file)(const char *path))
{
    pthread_mutex_lock(&S.lock);
    S.api = api;
    S.log = log;
    S.note_file = note_file;
    pthread_mutex_unlock(&S.lock);
}

/* The SASS metrics API gives a module's CRC in 32 bits: a CRC that fits
 * in them matches a kept one by its low half too. */
static const cubin *find(uint64_t crc)
{
    for (size_t i = 0; i < S.n; i++)
        if (S.v[i].crc == crc)
            return &S.v[i];
    if (crc <= UINT32_MAX)
        for (size_t i = 0; i < S.n; i++)
            if ((uint32_t)S.v[i].crc == crc)
                return &S.v[i];
    return NULL;
}

int gfl_cubins_add(const void *data, size_t size)
{
    if (!data || !size)
        return -1;
    pthread_mutex_lock(&S.lock);
    int rc = -1;
    if (!S.api || !S.api->cuptiGetCubinCrc)
        goto out;
    CUpti_GetCubinCrcParams p = {.size = CUpti_GetCubinCrcParamsSize, .cubinSize = size, .cubin = data};
    if (S.api->cuptiGetCubinCrc(&p) != CUPTI_SUCCESS)
        goto out;
    if (find(p.cubinCrc)) {
        rc = 0;
        goto out;
    }
    if (S.bytes + size > GFL_CUBINS_MAX_BYTES) {
        if (!S.full_said && S.log)
            S.log(GFL_LOG_WARN, "source lines: the modules kept reached 512 MiB; samples in modules loaded "
                                "from now on have no source line");
        S.full_said = true;
        goto out;
    }
    if (S.n == S.cap) {
        size_t cap = S.cap ? S.cap * 2 : 64;
        cubin *v = realloc(S.v, cap * sizeof *v);
        if (!v)
            goto out;
        S.v = v;
        S.cap = cap;
    }
    void *copy = malloc(size);
    if (!copy)
        goto out;
    memcpy(copy, data, size);
    S.v[S.n++] = (cubin){p.cubinCrc, copy, size};
    S.bytes += size;
    rc = 0;
out:
    pthread_mutex_unlock(&S.lock);
    return rc;
}

int gfl_cubins_source_line(uint64_t crc, const char *function, uint64_t pc_offset, char *file, size_t file_len,
                           uint32_t *line)
{
    pthread_mutex_lock(&S.lock);
    const cubin *c = S.api && S.api->cuptiGetSassToSourceCorrelation ? find(crc) : NULL;
    CUpti_GetSassToSourceCorrelationParams p = {
        .size = CUpti_GetSassToSourceCorrelationParamsSize,
        .cubin = c ? c->data : NULL,
        .functionName = function,
        .cubinSize = c ? c->size : 0,
        .pcOffset = pc_offset,
    };
    int rc = c && S.api->cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS && p.fileName && p.lineNumber ? 0 : -1;
    void (*note_file)(const char *path) = S.note_file;
    pthread_mutex_unlock(&S.lock);
    if (rc == 0) {
        if (p.dirName && p.dirName[0] && p.fileName[0] != '/')
            snprintf(file, file_len, "%s/%s", p.dirName, p.fileName);
        else
            snprintf(file, file_len, "%s", p.fileName);
        *line = p.lineNumber;
        if (note_file)
            note_file(file);
    }
    /* CUPTI allocates both with malloc and leaves them to us */
    free(p.fileName);
    free(p.dirName);
    return rc;
}

void gfl_cubins_stats(size_t *count, size_t *bytes)
{
    pthread_mutex_lock(&S.lock);
    *count = S.n;
    *bytes = S.bytes;
    pthread_mutex_unlock(&S.lock);
}

void gfl_cubins_clear(void)
{
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.n; i++)
        free(S.v[i].data);
    free(S.v);
    S.v = NULL;
    S.n = S.cap = S.bytes = 0;
    S.full_said = false;
    pthread_mutex_unlock(&S.lock);
}
