/*
 * CRC32C (see crc32c.h): slicing-by-8 tables built once, and the SSE4.2
 * instruction on x86-64 CPUs that have it.
 */
#include "core/crc32c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define POLY_REFLECTED 0x82F63B78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (POLY_REFLECTED & (0u - (c & 1)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++)
            table[s][i] = (table[s - 1][i] >> 8) ^ table[0][table[s - 1][i] & 0xff];
}

uint32_t gpufl__crc32c_sw(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&table_once, build_table);
    const unsigned char *p = data;
    crc = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8); /* little-endian hosts only (x86-64, aarch64) */
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
              table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t c = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}

uint32_t gpufl__crc32c(uint32_t crc, const void *data, size_t n)
{
    /* relaxed: every thread that finds -1 computes and stores the same
     * answer, so no ordering with anything else is needed */
    static _Atomic int have_hw = -1;
    int hw = atomic_load_explicit(&have_hw, memory_order_relaxed);
    if (hw < 0) {
        hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        atomic_store_explicit(&have_hw, hw, memory_order_relaxed);
    }
    return hw ? crc32c_hw(crc, data, n) : gpufl__crc32c_sw(crc, data, n);
}
#else
uint32_t gpufl__crc32c(uint32_t crc, const void *data, size_t n) { return gpufl__crc32c_sw(crc, data, n); }
#endif
