/*
 * The CPU stacks of a recorded session, read back from its `stack` events
 * (docs/FORMAT.md) in whatever format it was written (NDJSON logs or a
 * .gflt trace), with how many device events refer to each.
 *
 * A stack's definition may come in several pieces, in any order, from
 * different threads' rings; a piece can also be missing (a session killed
 * before the collector wrote it). Pieces are joined by id and `first`;
 * missing frames are marked.
 *
 * Reader side, one thread; sizes: thousands of stacks, tens of modules.
 */
#ifndef GPUFL_READ_STACK_TABLE_H
#define GPUFL_READ_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gpufl__stack_frame_rec {
    const char *module; /* path, owned by the table; NULL = unknown (JIT code) */
    uint64_t offset;    /* in the module's ELF file; the address when module is NULL */
    bool present;       /* false: the piece holding this frame was not found */
    bool source;        /* a source (Python) frame: module is its whole text,
                           "function (file:line)", and offset its line */
} gpufl__stack_frame_rec;

typedef struct gpufl__stack_rec {
    uint32_t id;
    uint32_t total;                 /* frames in the stack */
    bool truncated;                 /* the stack was deeper than what was recorded */
    uint32_t missing;               /* frames whose piece was not found */
    uint64_t uses;                  /* device events whose stack id is this id */
    gpufl__stack_frame_rec *frames; /* total entries, innermost first */
    bool source;                    /* a source (Python) stack (GFL_F_STACK_SOURCE) */
} gpufl__stack_rec;

typedef struct gpufl__stack_table {
    gpufl__stack_rec *stacks; /* sorted by id */
    size_t n;
    uint64_t unknown_uses; /* device events that refer to a stack never defined */
    char **modules;        /* distinct module paths */
    size_t nmodules;
    /* Appended: which files were read and why (gpufl__event_source). */
    char read_files[1024], read_why[512];
    uint32_t copies;
} gpufl__stack_table;

/* Loads the stacks of the session in `path`: its directory (trace.gflt when
 * it has one, else its NDJSON logs), its session.json, one NDJSON log or one
 * .gflt file, as gpufl__source_open() reads them. A torn last line or chunk
 * is skipped. Returns 0; GPUFL_ENOTFOUND when path holds no session,
 * GPUFL_ECORRUPT for damage (err names the file and the line, offset or
 * event), GPUFL_ENOMEM; on failure err says what and *out is left empty. */
__attribute__((warn_unused_result)) int gpufl__stack_table_load(const char *path, gpufl__stack_table *out, char *err,
                                                                size_t err_len);
void gpufl__stack_table_free(gpufl__stack_table *t);

/* The stack with this id, or NULL (also for a NULL table). */
const gpufl__stack_rec *gpufl__stack_table_find(const gpufl__stack_table *t, uint32_t id);

#endif /* GPUFL_READ_STACK_TABLE_H */
