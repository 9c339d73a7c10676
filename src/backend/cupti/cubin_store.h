/*
 * The cubins of the modules the program loaded, kept so that an
 * instruction (a module's CRC, a function and a PC offset, as PC sampling
 * and SASS metrics report it) can be turned into a source file and line
 * after the module is gone. CUPTI hands each cubin to the module-loaded
 * callback; line info is there only when the code was built with it
 * (-lineinfo or -G), and CUPTI then reads it from the cubin.
 *
 * Memory: a framework loads hundreds of modules lazily; the store takes
 * at most GFL_CUBINS_MAX_BYTES and then keeps no more (logged once), so
 * later modules' samples have no line. Any thread; a mutex guards the
 * store (a module load is rare, the lookups are the plugin's worker's).
 */
#ifndef GPUFL_BACKEND_CUPTI_CUBIN_STORE_H
#define GPUFL_BACKEND_CUPTI_CUBIN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cupti/cupti_api.h"

#define GFL_CUBINS_MAX_BYTES (512ull << 20)

/* The CUPTI whose cuptiGetCubinCrc and cuptiGetSassToSourceCorrelation
 * the store uses; log(level, message) for its one warning, or NULL. */
/* note_file(path), or NULL: called with each file a lookup resolves
 * (enable_source_collection: the session copies them at its end). */
void gfl_cubins_init(const gfl_cupti_api *api, void (*log)(int level, const char *message),
                     void (*note_file)(const char *path));

/* On module load: keeps a copy of the cubin under its CRC (once per CRC).
 * 0, or -1 when it is not kept (no CRC function, store full, no memory). */
int gfl_cubins_add(const void *cubin, size_t size);

/* The source line of pc_offset in `function` (its name in the module) of
 * the module with this CRC (or its low 32 bits, as SASS metrics give it): the file's path ("dir/file") into file and the
 * line into *line. 0, or -1 when the module is not kept or has no line
 * info there. */
int gfl_cubins_source_line(uint64_t crc, const char *function, uint64_t pc_offset, char *file, size_t file_len,
                           uint32_t *line);

/* Modules kept and their bytes. */
void gfl_cubins_stats(size_t *count, size_t *bytes);

/* Frees every cubin (the plugin's stop). */
void gfl_cubins_clear(void);

#endif /* GPUFL_BACKEND_CUPTI_CUBIN_STORE_H */
