/*
 * An out-of-memory diagnosed (issue 14): what was asked for, what the GPU,
 * the framework's allocator and the other processes held at that moment,
 * the largest allocations live then (driver and framework layers), and
 * which of three causes it was. Read from a dump of the flight window (its
 * oom.json, written by the session) or from any session that holds a failed
 * allocation (`gpufl mem diagnose`).
 *
 * The incident: the last trigger of kind "oom" (the one a dump was written
 * for), with the last failed allocation at or before it; without such a
 * trigger, the first failed allocation. Figures are the latest of each kind
 * on the incident's device at or before it.
 *
 * Classification (first rule that holds; docs/FORMAT.md, oom.json):
 *   another_process  other processes (all used - this process's, NVML) hold
 *                    at least a quarter of the device or at least the
 *                    request, and the request is more than device free
 *                    but fits in device free plus theirs;
 *   fragmentation    memory the allocator caches (reserved - allocated)
 *                    plus device free is at least the request, but no
 *                    single free block is (the allocator's largest free
 *                    block, 0 when unknown, and device free are both
 *                    smaller);
 *   real_exhaustion  otherwise: the memory was in use.
 *
 * Threads: any; reads the trace only. Cost: one pass over the memory,
 * allocator and GPU sample rows up to the incident.
 */
#ifndef GPUFL_ANALYZE_ANA_OOM_H
#define GPUFL_ANALYZE_ANA_OOM_H

#include <stdbool.h>
#include <stdint.h>

#include "gpufl/trace.h"

#define GPUFL__ANA_OOM_LIVE 20 /* the largest live allocations kept */

enum { GPUFL__OOM_SOURCE_CUDA = 0, GPUFL__OOM_SOURCE_FRAMEWORK = 1 };

/* Where device_free_bytes and device_total_bytes come from. */
enum {
    GPUFL__OOM_MEM_NONE = 0,
    GPUFL__OOM_MEM_ALLOCATOR = 1, /* the allocator's state at the OOM (device free from the driver) */
    GPUFL__OOM_MEM_NVML = 2, /* the NVML sample nearest the OOM (the first within 2 s after, else the last before) */
    GPUFL__OOM_MEM_DEVICE_INFO = 3, /* only the device's total, from its description */
};

enum {
    GPUFL__OOM_REAL_EXHAUSTION = 0,
    GPUFL__OOM_FRAGMENTATION = 1,
    GPUFL__OOM_ANOTHER_PROCESS = 2,
};

/* One allocation live at the OOM. */
typedef struct gpufl__ana_oom_live {
    uint64_t ts_ns; /* when it was allocated */
    uint64_t address, bytes;
    bool framework;      /* a framework block (else a driver allocation) */
    uint32_t tid;        /* 0 unknown */
    uint64_t scope;      /* innermost gpufl scope id, 0 none */
    uint32_t scope_name; /* its name (string id), 0 unknown */
    uint32_t nvtx;       /* innermost NVTX range or op (string id), 0 none */
    uint32_t stack;      /* stack id (a source stack for framework blocks), 0 none */
    /* a driver allocation that is a segment of the framework's allocator:
     * the live blocks inside it (the same memory, seen from above) */
    uint32_t blocks_inside;
    uint64_t block_bytes_inside;
} gpufl__ana_oom_live;

typedef struct gpufl__ana_oom {
    bool found;       /* the trace holds an out-of-memory; nothing below is set otherwise */
    uint64_t at_ns;   /* the failed allocation, else the trigger (session timebase) */
    uint64_t time_ns; /* at_ns since the session's start */
    uint32_t device;
    uint32_t tid;    /* the thread that failed, 0 unknown */
    uint8_t source;  /* GPUFL__OOM_SOURCE_* */
    bool has_failed; /* a failed allocation was recorded */
    bool has_requested;
    uint64_t requested_bytes;
    bool has_trigger;
    uint32_t detail; /* the trigger's detail (string id), 0 none */
    uint32_t dump;   /* the trigger's dump name (string id), 0 none */

    uint8_t memory_source; /* GPUFL__OOM_MEM_* */
    bool has_free, has_total;
    uint64_t device_free_bytes, device_total_bytes;
    bool has_process_used, has_all_used; /* from the NVML sample nearest the OOM */
    uint64_t process_used_bytes, all_processes_used_bytes;

    bool has_allocator; /* the allocator's last state at or before the OOM */
    uint32_t framework; /* its framework (string id) */
    uint64_t allocated, reserved, active, inactive_split, largest_free;
    uint32_t alloc_retries, ooms;

    /* live allocations on the device at the OOM, by layer (0 driver, 1 framework) */
    uint64_t live_count[2], live_bytes[2];
    uint32_t nlive;
    gpufl__ana_oom_live live[GPUFL__ANA_OOM_LIVE]; /* largest first, then older, then lower address */

    /* the classification and the figures it used */
    uint8_t classification;       /* GPUFL__OOM_* */
    uint64_t cached_free_bytes;   /* reserved - allocated (0 without an allocator) */
    uint64_t reclaimable_bytes;   /* cached_free_bytes + device free */
    uint64_t largest_block_bytes; /* the largest single free block known: max(largest_free, device free) */
    bool has_other;
    uint64_t other_processes_bytes; /* all used - this process's */
} gpufl__ana_oom;

/* Diagnoses the out-of-memory of t into *out (zeroed first; found false
 * when t holds none). Returns 0, GPUFL_EINVAL for a NULL argument, or
 * GPUFL_ENOMEM. Nothing to free. */
int gpufl__analyze_oom(const gpufl_trace *t, gpufl__ana_oom *out) __attribute__((warn_unused_result));

/* "real_exhaustion", "fragmentation", "another_process"; "cuda",
 * "framework"; "allocator", "nvml", "device_info", "none". */
const char *gpufl__oom_classification_name(uint8_t c);
const char *gpufl__oom_source_name(uint8_t s);
const char *gpufl__oom_memory_source_name(uint8_t m);

#endif /* GPUFL_ANALYZE_ANA_OOM_H */
