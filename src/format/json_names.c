/*
 * Cached JSON text of string ids (see json_names.h).
 */
#include "format/json_names.h"

#include <stdlib.h>

void gpufl__jnames_init(gpufl__jnames *j, const gpufl__string_lookup *names)
{
    memset(j, 0, sizeof *j);
    j->names = names;
}

void gpufl__jnames_init_uncached(gpufl__jnames *j, const gpufl__string_lookup *names)
{
    gpufl__jnames_init(j, names);
    j->uncached = true;
}

void gpufl__jnames_free(gpufl__jnames *j)
{
    free(j->ids);
    free(j->text);
    memset(j, 0, sizeof *j);
}

/* Room for id in the table. false: past the limit or out of memory. */
static bool have_id(gpufl__jnames *j, uint32_t id)
{
    if (id < j->nids)
        return true;
    if (id >= GFL_JNAMES_MAX_IDS)
        return false;
    uint32_t n = j->nids ? j->nids : 256;
    while (n <= id)
        n *= 2;
    gpufl__jname *bigger = realloc(j->ids, (size_t)n * sizeof *bigger);
    if (!bigger)
        return false;
    memset(bigger + j->nids, 0, (size_t)(n - j->nids) * sizeof *bigger);
    j->ids = bigger;
    j->nids = n;
    return true;
}

/* Room for n more bytes of text. false: past the limit or out of memory. */
static bool have_text(gpufl__jnames *j, size_t n)
{
    if (j->cap - j->len >= n)
        return true;
    if (j->len + n > GFL_JNAMES_MAX_BYTES)
        return false;
    size_t cap = j->cap ? j->cap : 4096;
    while (cap - j->len < n)
        cap *= 2;
    char *bigger = realloc(j->text, cap);
    if (!bigger)
        return false;
    j->text = bigger;
    j->cap = cap;
    return true;
}

const gpufl__jname *gpufl__jnames_make(gpufl__jnames *j, uint32_t id)
{
    if (j->uncached || !have_id(j, id))
        return NULL;
    uint32_t len = 0;
    const char *s = gpufl__lookup(j->names, id, &len);
    if (!have_text(j, GFL_JSTR_BOUND(len)))
        return NULL;
    char *at = j->text + j->len;
    size_t n = (size_t)(gpufl__jput_str(at, s, len) - at);
    j->ids[id] = (gpufl__jname){(uint32_t)j->len, (uint32_t)n};
    j->len += n;
    return &j->ids[id];
}
