/*
 * The names of the timeline's slices (timeline_names.h).
 */
#include "present/timeline/timeline_names.h"

#include "core/names.h"

/* The fixed names, numbered: a few of their own, then a copy's and its
 * call's and a sync's per kind (core/names.h). */
enum {
    N_KERNEL,
    N_UNNAMED,
    N_MEMSET,
    N_MEMSET_CALL,
    N_GRAPH_LAUNCH,
    N_LAUNCH,
    N_TRACE_WINDOW,
    N_TRIGGER,
    N_COPY,
    N_COPY_CALL = N_COPY + GFL_COPY_KIND_COUNT,
    N_SYNC = N_COPY_CALL + GFL_COPY_KIND_COUNT,
    N_COUNT = N_SYNC + GFL_SYNC_KIND_COUNT
};

static const char *const fixed_names[N_COPY] = {
    [N_KERNEL] = "kernel",
    [N_UNNAMED] = "(unnamed)",
    [N_MEMSET] = "memset",
    [N_MEMSET_CALL] = "memset (call)",
    [N_GRAPH_LAUNCH] = "graph launch",
    [N_LAUNCH] = "launch",
    [N_TRACE_WINDOW] = "trace window",
    [N_TRIGGER] = "trigger",
};

const char *gpufl__xname_fixed(uint32_t fixed)
{
    if (fixed < N_COPY)
        return fixed_names[fixed];
    if (fixed < N_COPY_CALL)
        return gpufl__copy_kind((uint8_t)(fixed - N_COPY))->slice;
    if (fixed < N_SYNC)
        return gpufl__copy_kind((uint8_t)(fixed - N_COPY_CALL))->call;
    if (fixed < N_COUNT)
        return gpufl__sync_kind((uint8_t)(fixed - N_SYNC))->slice;
    return "";
}

uint32_t gpufl__xname_fixed_count(void) { return N_COUNT; }

void gpufl__xname_of(const gpufl__rows *x, const gpufl__tl_slice *s, gpufl__xname *n)
{
    n->fixed = GPUFL__XNAME_STRING;
    n->string = 0;
    n->launch = 0;
    if (s->src == GPUFL__TL_SRC_WINDOW) {
        n->fixed = N_TRACE_WINDOW;
        return;
    }
    if (s->src == GPUFL__TL_SRC_TRIGGER) {
        /* by its kind ("oom", "dump"): what a reader looks for on the track */
        if (s->trigger->kind && *gpufl__rows_str(x, s->trigger->kind))
            n->string = s->trigger->kind;
        else
            n->fixed = N_TRIGGER;
        return;
    }
    unsigned src = s->src == GPUFL__TL_API ? s->op_src : s->src;
    int call = s->src == GPUFL__TL_API;
    switch (src) {
    case GPUFL__TBL_KERNEL:
        if (call && s->op->graph_id) {
            n->fixed = N_GRAPH_LAUNCH;
        } else if (s->op->name) {
            n->string = s->op->name;
            n->launch = (uint8_t)call;
        } else {
            n->fixed = call ? N_LAUNCH : N_KERNEL;
        }
        return;
    case GPUFL__TBL_COPY:
        n->fixed = (call ? N_COPY_CALL : N_COPY) + (s->op->kind < GFL_COPY_KIND_COUNT ? s->op->kind : 0);
        return;
    case GPUFL__TBL_MEMSET: n->fixed = call ? N_MEMSET_CALL : N_MEMSET; return;
    case GPUFL__TBL_SYNC: n->fixed = N_SYNC + (s->op->kind < GFL_SYNC_KIND_COUNT ? s->op->kind : 0); return;
    default:
        if (s->range->name && *gpufl__rows_str(x, s->range->name))
            n->string = s->range->name;
        else
            n->fixed = N_UNNAMED;
        return;
    }
}

static const gpufl__tl_kind_names kinds[GPUFL__TL_SRC_TRIGGER + 1] = {
    [GPUFL__TBL_KERNEL] = {"kernel", 0, -1},
    [GPUFL__TBL_COPY] = {"memcpy", 1, -1},
    [GPUFL__TBL_MEMSET] = {"memset", 2, -1},
    [GPUFL__TBL_SCOPE] = {"scope", 3, -1},
    [GPUFL__TBL_NVTX] = {"nvtx", 4, 5},
    [GPUFL__TBL_SYNC] = {"sync", 6, -1},
    [GPUFL__TL_API] = {"api", -1, -1},
    [GPUFL__TL_SRC_WINDOW] = {"trace_window", 7, -1},
    [GPUFL__TL_SRC_TRIGGER] = {"trigger", -1, 8},
};

const gpufl__tl_kind_names *gpufl__tl_src_names(unsigned src)
{
    static const gpufl__tl_kind_names none = {"", -1, -1};
    return src <= GPUFL__TL_SRC_TRIGGER && kinds[src].category ? &kinds[src] : &none;
}
