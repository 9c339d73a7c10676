/*
 * Ring setup and teardown; the fast paths are inline in ring.h.
 * The bytes are mmap()ed so that a large, mostly idle ring stays non-resident.
 */
#include "ring/ring.h"

#include <string.h>
#include <sys/mman.h>

#include "gpufl/gpufl.h"

size_t gpufl__ring_bytes_for(uint32_t events)
{
    if (events < GFL_RING_MIN_EVENTS)
        events = GFL_RING_MIN_EVENTS;
    if (events > GFL_RING_MAX_EVENTS)
        events = GFL_RING_MAX_EVENTS;
    uint64_t units = 1;
    while (units < events)
        units <<= 1;
    return (size_t)units * GFL_RING_UNIT;
}

int gpufl__ring_init(gpufl__ring *ring, uint32_t events)
{
    memset(ring, 0, sizeof *ring);
    size_t bytes = gpufl__ring_bytes_for(events);
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return GPUFL_ENOMEM;
    ring->bytes = map;
    ring->mask = bytes - 1;
    ring->map_bytes = bytes;
    return 0;
}

void gpufl__ring_destroy(gpufl__ring *ring)
{
    if (ring->bytes)
        munmap(ring->bytes, ring->map_bytes);
    memset(ring, 0, sizeof *ring);
}
