/*
 * The cubins of the modules the program loaded, kept so that a SASS pc
 * (PC sampling, SASS metrics) can be turned into its source file and line
 * with cuptiGetSassToSourceCorrelation. Added from the RESOURCE domain's
 * MODULE_LOADED callback (the loading thread), looked up from the engines'
 * threads; one mutex. Modules are few (tens, a few MB each); a copy of
 * each is kept until the plugin stops.
 */
#ifndef GPUFL_BACKEND_CUPTI_CUBIN_STORE_H
#define GPUFL_BACKEND_CUPTI_CUBIN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cupti/cupti_api.h"

/* The CUPTI whose cuptiGetCubinCrc and cuptiGetSassToSourceCorrelation the
 * store uses; NULL forgets every cubin. */
void gfl_cubins_use(const gfl_cupti_api *api);

/* Keeps a copy of a module's cubin under its CRC (cuptiGetCubinCrc).
 * Returns 0, or -1 (no CUPTI function, out of memory: not kept). */
int gfl_cubins_add(const void *cubin, size_t size);

/* The source file (directory joined) and line of pc_offset in function of
 * the cubin with this CRC (its low 32 bits match too: the SASS metrics API
 * gives 32). Returns 0, or -1 when unknown (no such cubin, no line info:
 * compiled without -lineinfo). */
int gfl_cubins_source_line(uint64_t crc, const char *function, uint64_t pc_offset, char *file, size_t file_len,
                           uint32_t *line);

#endif /* GPUFL_BACKEND_CUPTI_CUBIN_STORE_H */
