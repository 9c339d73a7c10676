/*
 * CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum of
 * every .gflt chunk (docs/FORMAT.md). Any thread; no state after the first
 * call.
 *
 * Chunks are 10 KB to a few MB and are checked once when written and once
 * when read, so this runs at memory speed where it can: the SSE4.2 crc32
 * instruction when the CPU has it, else a slicing-by-8 table (about 1.5
 * bytes per cycle). Both give the same values (tests/test_gflt_codec.c).
 */
#ifndef GPUFL_CORE_CRC32C_H
#define GPUFL_CORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C of n bytes, continuing from crc (0 for a fresh checksum):
 * crc32c(crc32c(0, a), b) == crc32c(0, a followed by b). */
uint32_t gpufl__crc32c(uint32_t crc, const void *data, size_t n);

/* The table version alone (tests compare it with the hardware one). */
uint32_t gpufl__crc32c_sw(uint32_t crc, const void *data, size_t n);

#endif /* GPUFL_CORE_CRC32C_H */
