/*
 * What the program's thread knew when it made a CUDA call, by correlation
 * id: written by the API callback on that thread (tid, innermost gpufl scope
 * and NVTX range, stack, call start and end), read later by the worker when
 * the activity record with the same correlation id arrives — typically
 * 100 ms to a few seconds afterwards.
 *
 * Correlation ids are handed out in sequence, so the table is direct mapped
 * (id modulo the size) with no hashing and no locks. A slot is reused once
 * the ids have advanced by the table's size; an entry overwritten before
 * its record arrived is detected (the id no longer matches) and the record
 * goes out unattributed, counted. Two calls whose ids are exactly a table
 * size apart and in flight at the same instant could mix their fields;
 * with 2^17 slots that needs 131072 CUDA calls between one call's entry and
 * exit on another thread, which we accept.
 *
 * Fields are relaxed atomics so that the benign race above is defined
 * behaviour (and quiet under TSan); on x86 they compile to plain moves.
 */
#ifndef GPUFL_BACKEND_CUPTI_LAUNCH_TABLE_H
#define GPUFL_BACKEND_CUPTI_LAUNCH_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define GFL_LAUNCH_TABLE_BITS 17
/* While SASS metrics run the plugin's worker does not flush (engines.h):
 * device records come when a 2 MiB buffer fills or at the end, and their
 * launch details must last that long. On ResNet-50 training (H100) 180 of
 * 9577 kernels had lost theirs after 13 steps with 2^17 slots; 2^21 (84 MB,
 * touched only as ids reach them) last some 16 times longer. */
#define GFL_LAUNCH_TABLE_BITS_UNFLUSHED 21

typedef struct gfl_launch_info {
    uint32_t tid;
    uint32_t nvtx;  /* string id of the innermost NVTX range, 0 = none */
    uint32_t stack; /* stack id, 0 = none */
    uint64_t scope; /* innermost gpufl scope, 0 = none */
    uint64_t api_start, api_end;
} gfl_launch_info;

typedef struct gfl_launch_slot {
    _Atomic uint32_t corr; /* 0 while being written */
    _Atomic uint32_t tid;
    _Atomic uint32_t nvtx;
    _Atomic uint32_t stack;
    _Atomic uint64_t scope;
    _Atomic uint64_t api_start;
    _Atomic uint64_t api_end;
} gfl_launch_slot;

typedef struct gfl_launch_table {
    gfl_launch_slot *slots;
    uint32_t mask;
} gfl_launch_table;

/* Allocates 2^bits slots (pages are touched only as ids reach them).
 * Returns 0 or -1. */
int gfl_launch_table_init(gfl_launch_table *t, unsigned bits);
void gfl_launch_table_free(gfl_launch_table *t);

/* API entry, on the calling thread. */
static inline void gfl_launch_enter(gfl_launch_table *t, uint32_t corr, const gfl_launch_info *in)
{
    gfl_launch_slot *s = &t->slots[corr & t->mask];
    atomic_store_explicit(&s->corr, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* readers see 0 before the new fields */
    atomic_store_explicit(&s->tid, in->tid, memory_order_relaxed);
    atomic_store_explicit(&s->nvtx, in->nvtx, memory_order_relaxed);
    atomic_store_explicit(&s->stack, in->stack, memory_order_relaxed);
    atomic_store_explicit(&s->scope, in->scope, memory_order_relaxed);
    atomic_store_explicit(&s->api_start, in->api_start, memory_order_relaxed);
    atomic_store_explicit(&s->api_end, 0, memory_order_relaxed);
    /* release: a reader that sees corr sees every field above */
    atomic_store_explicit(&s->corr, corr, memory_order_release);
}

/* API exit, on the calling thread. */
static inline void gfl_launch_exit(gfl_launch_table *t, uint32_t corr, uint64_t api_end)
{
    gfl_launch_slot *s = &t->slots[corr & t->mask];
    if (atomic_load_explicit(&s->corr, memory_order_relaxed) == corr)
        atomic_store_explicit(&s->api_end, api_end, memory_order_release);
}

/* The worker: fills *out and returns true when the entry for corr is still
 * there and was not being rewritten while it was read. */
static inline bool gfl_launch_find(const gfl_launch_table *t, uint32_t corr, gfl_launch_info *out)
{
    if (!corr || !t->slots)
        return false;
    gfl_launch_slot *s = &t->slots[corr & t->mask];
    if (atomic_load_explicit(&s->corr, memory_order_acquire) != corr)
        return false;
    out->tid = atomic_load_explicit(&s->tid, memory_order_relaxed);
    out->nvtx = atomic_load_explicit(&s->nvtx, memory_order_relaxed);
    out->stack = atomic_load_explicit(&s->stack, memory_order_relaxed);
    out->scope = atomic_load_explicit(&s->scope, memory_order_relaxed);
    out->api_start = atomic_load_explicit(&s->api_start, memory_order_relaxed);
    out->api_end = atomic_load_explicit(&s->api_end, memory_order_acquire);
    /* acquire fence: the re-check below is ordered after the field reads */
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->corr, memory_order_relaxed) == corr;
}

#endif /* GPUFL_BACKEND_CUPTI_LAUNCH_TABLE_H */
