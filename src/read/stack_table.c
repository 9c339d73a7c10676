/*
 * Reading `stack` lines back (see stack_table.h).
 *
 * Only lines that are stack definitions are parsed as JSON; for every other
 * line the "stack": key is found by text, which is safe because inside a
 * JSON string its quotes would be escaped. Ids are dense from 1 (the
 * recorder hands them out in order), so per-id arrays index them directly.
 */
#include "read/stack_table.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpufl/gpufl.h"

#define MAX_ID (1u << 24)

typedef struct loader {
    gpufl__stack_table *t;
    uint32_t *pos;  /* id -> index in t->stacks + 1, 0 = not seen */
    uint64_t *uses; /* id -> lines referring to it */
    uint32_t id_cap;
    size_t stack_cap;
    char *err;
    size_t err_len;
} loader;

static int grow_ids(loader *l, uint32_t id)
{
    if (id < l->id_cap)
        return 0;
    uint32_t cap = l->id_cap ? l->id_cap : 1024;
    while (cap <= id)
        cap *= 2;
    uint32_t *pos = realloc(l->pos, cap * sizeof *pos);
    if (pos)
        l->pos = pos;
    uint64_t *uses = realloc(l->uses, cap * sizeof *uses);
    if (uses)
        l->uses = uses;
    if (!pos || !uses)
        return GPUFL_ENOMEM;
    memset(l->pos + l->id_cap, 0, (cap - l->id_cap) * sizeof *pos);
    memset(l->uses + l->id_cap, 0, (cap - l->id_cap) * sizeof *uses);
    l->id_cap = cap;
    return 0;
}

static const char *intern_module(gpufl__stack_table *t, const char *path)
{
    for (size_t i = 0; i < t->nmodules; i++)
        if (!strcmp(t->modules[i], path))
            return t->modules[i];
    char **m = realloc(t->modules, (t->nmodules + 1) * sizeof *m);
    if (!m)
        return NULL;
    t->modules = m;
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    t->modules[t->nmodules++] = copy;
    return copy;
}

/* The stack record for id, created with `total` frames (all missing) on
 * first sight. */
static gpufl__stack_rec *stack_for(loader *l, uint32_t id, uint32_t total)
{
    if (grow_ids(l, id) != 0)
        return NULL;
    gpufl__stack_table *t = l->t;
    if (l->pos[id])
        return &t->stacks[l->pos[id] - 1];
    if (t->n == l->stack_cap) {
        size_t cap = l->stack_cap ? 2 * l->stack_cap : 64;
        gpufl__stack_rec *s = realloc(t->stacks, cap * sizeof *s);
        if (!s)
            return NULL;
        t->stacks = s;
        l->stack_cap = cap;
    }
    gpufl__stack_rec *s = &t->stacks[t->n];
    memset(s, 0, sizeof *s);
    s->frames = calloc(total ? total : 1, sizeof *s->frames);
    if (!s->frames)
        return NULL;
    s->id = id;
    s->total = total;
    s->missing = total;
    l->pos[id] = (uint32_t)++t->n;
    return s;
}

static int bad_line(loader *l, const char *file, size_t lineno, const char *why)
{
    snprintf(l->err, l->err_len, "%s:%zu: stack line %s", file, lineno, why);
    return GPUFL_ECORRUPT;
}

static int stack_line(loader *l, const char *text, const char *file, size_t lineno)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        return bad_line(l, file, lineno, jerr.text);
    int rc = 0;
    json_t *frames = json_object_get(j, "frames");
    json_int_t id = json_integer_value(json_object_get(j, "id"));
    json_int_t first = json_integer_value(json_object_get(j, "first"));
    json_int_t total = json_integer_value(json_object_get(j, "total"));
    if (id <= 0 || id >= MAX_ID || first < 0 || total < 0 || total > 0xffff || !json_is_array(frames) ||
        (size_t)first + json_array_size(frames) > (size_t)total) {
        rc = bad_line(l, file, lineno, "has a bad id, first, total or frames");
        goto out;
    }
    gpufl__stack_rec *s = stack_for(l, (uint32_t)id, (uint32_t)total);
    if (!s) {
        rc = GPUFL_ENOMEM;
        snprintf(l->err, l->err_len, "out of memory");
        goto out;
    }
    if (s->total != (uint32_t)total) {
        rc = bad_line(l, file, lineno, "disagrees with an earlier piece on the frame count");
        goto out;
    }
    if (json_is_true(json_object_get(j, "truncated")))
        s->truncated = true;
    for (size_t i = 0; i < json_array_size(frames); i++) {
        json_t *f = json_array_get(frames, i);
        json_t *mod = json_array_get(f, 0);
        const char *hex = json_string_value(json_array_get(f, 1));
        if (!json_is_array(f) || !hex || !(json_is_string(mod) || json_is_null(mod))) {
            rc = bad_line(l, file, lineno, "has a frame that is not [module, \"0x...\"]");
            goto out;
        }
        gpufl__stack_frame_rec *r = &s->frames[first + (json_int_t)i];
        if (json_is_string(mod) && !(r->module = intern_module(l->t, json_string_value(mod)))) {
            rc = GPUFL_ENOMEM;
            snprintf(l->err, l->err_len, "out of memory");
            goto out;
        }
        r->offset = strtoull(hex, NULL, 16);
        if (!r->present) {
            r->present = true;
            s->missing--;
        }
    }
out:
    json_decref(j);
    return rc;
}

/* Counts a reference from any other line (kernel, memcpy, sync, ...). */
static int count_use(loader *l, const char *text)
{
    const char *k = strstr(text, "\"stack\":");
    if (!k)
        return 0;
    unsigned long id = strtoul(k + 8, NULL, 10);
    if (!id || id >= MAX_ID)
        return 0;
    if (grow_ids(l, (uint32_t)id) != 0)
        return GPUFL_ENOMEM;
    l->uses[id]++;
    return 0;
}

static int load_file(loader *l, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return GPUFL_ENOTFOUND;
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[len - 1] != '\n')
            break; /* torn last line: a writer killed mid-line */
        if (!strncmp(line, "{\"type\":\"stack\",", 16))
            rc = stack_line(l, line, path, lineno);
        else
            rc = count_use(l, line);
    }
    free(line);
    fclose(f);
    return rc;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const gpufl__stack_rec *)a)->id, y = ((const gpufl__stack_rec *)b)->id;
    return x < y ? -1 : x > y;
}

int gpufl__stack_table_load(const char *path, gpufl__stack_table *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    char dir[4096];
    struct stat st;
    snprintf(dir, sizeof dir, "%s", path);
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) { /* session.json: its directory */
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    }
    loader l = {.t = out, .err = err, .err_len = err_len};
    int rc = 0;
    char file[4200];
    for (int part = 1; rc == 0; part++) {
        snprintf(file, sizeof file, "%s/device.%d.log", dir, part);
        if (access(file, F_OK) != 0)
            break;
        rc = load_file(&l, file);
    }
    if (rc == 0) {
        snprintf(file, sizeof file, "%s/device.log", dir);
        rc = load_file(&l, file);
        if (rc == GPUFL_ENOTFOUND)
            snprintf(err, err_len, "%s: cannot read it (is %s a session directory?)", file, path);
    }
    if (rc == 0) {
        for (size_t i = 0; i < out->n; i++)
            out->stacks[i].uses = l.uses[out->stacks[i].id];
        for (uint32_t id = 0; id < l.id_cap; id++)
            if (l.uses[id] && !l.pos[id])
                out->unknown_uses += l.uses[id];
        if (out->n)
            qsort(out->stacks, out->n, sizeof *out->stacks, by_id);
    }
    free(l.pos);
    free(l.uses);
    if (rc != 0)
        gpufl__stack_table_free(out);
    return rc;
}

void gpufl__stack_table_free(gpufl__stack_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->stacks[i].frames);
    free(t->stacks);
    for (size_t i = 0; i < t->nmodules; i++)
        free(t->modules[i]);
    free(t->modules);
    memset(t, 0, sizeof *t);
}

const gpufl__stack_rec *gpufl__stack_table_find(const gpufl__stack_table *t, uint32_t id)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->stacks[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->stacks[lo].id == id ? &t->stacks[lo] : NULL;
}
