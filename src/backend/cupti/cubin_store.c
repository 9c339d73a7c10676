/*
 * The cubin store (see cubin_store.h).
 */
#include "backend/cupti/cubin_store.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_pcsampling.h>

typedef struct cubin {
    struct cubin *next;
    uint64_t crc;
    size_t size;
    unsigned char bytes[];
} cubin;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const gfl_cupti_api *api;
static cubin *cubins;
static __typeof__(&cuptiGetCubinCrc) get_crc;
static __typeof__(&cuptiGetSassToSourceCorrelation) to_source;

void gfl_cubins_use(const gfl_cupti_api *a)
{
    pthread_mutex_lock(&lock);
    while (cubins) {
        cubin *next = cubins->next;
        free(cubins);
        cubins = next;
    }
    api = a;
    /* looked up here rather than bound in cupti_api.c: only the source
     * lines need them */
    *(void **)&get_crc = a ? dlsym(a->lib, "cuptiGetCubinCrc") : NULL;
    *(void **)&to_source = a ? dlsym(a->lib, "cuptiGetSassToSourceCorrelation") : NULL;
    pthread_mutex_unlock(&lock);
}

int gfl_cubins_add(const void *bytes, size_t size)
{
    if (!bytes || !size)
        return -1;
    pthread_mutex_lock(&lock);
    int rc = -1;
    CUpti_GetCubinCrcParams p = {.size = CUpti_GetCubinCrcParamsSize, .cubinSize = size, .cubin = bytes};
    if (api && get_crc && get_crc(&p) == CUPTI_SUCCESS) {
        cubin *c;
        for (c = cubins; c && c->crc != p.cubinCrc; c = c->next)
            ;
        if (c) {
            rc = 0; /* the same module loaded again */
        } else if ((c = malloc(sizeof *c + size))) {
            c->crc = p.cubinCrc;
            c->size = size;
            memcpy(c->bytes, bytes, size);
            c->next = cubins;
            cubins = c;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int gfl_cubins_source_line(uint64_t crc, const char *function, uint64_t pc_offset, char *file, size_t file_len,
                           uint32_t *line)
{
    if (!function || !file || !file_len || !line)
        return -1;
    pthread_mutex_lock(&lock);
    cubin *c;
    for (c = cubins; c && c->crc != crc && (uint32_t)c->crc != crc; c = c->next)
        ;
    int rc = -1;
    if (c && to_source) {
        CUpti_GetSassToSourceCorrelationParams p = {.size = CUpti_GetSassToSourceCorrelationParamsSize,
                                                    .cubin = c->bytes,
                                                    .functionName = function,
                                                    .cubinSize = c->size,
                                                    .pcOffset = pc_offset};
        if (to_source(&p) == CUPTI_SUCCESS && p.fileName && p.lineNumber) {
            if (p.dirName && p.dirName[0] && p.fileName[0] != '/')
                snprintf(file, file_len, "%s/%s", p.dirName, p.fileName);
            else
                snprintf(file, file_len, "%s", p.fileName);
            *line = p.lineNumber;
            rc = 0;
        }
        free(p.fileName); /* CUPTI's allocations, the caller's to free */
        free(p.dirName);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
