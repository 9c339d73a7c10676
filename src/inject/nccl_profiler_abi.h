/*
 * NCCL's profiler plugin interface, as far as gpufl's plugin uses it:
 * our own declarations of the layouts NCCL passes (written from NCCL's
 * plugin documentation and the layouts of its versions 2 to 4; no NCCL
 * header is needed to build). A plugin exports one struct per version
 * under the name ncclProfiler_v<N>; NCCL takes the newest it knows,
 * newest first: NCCL 2.24-2.25 speak v2, 2.26 v3, 2.27 and later v4 (later
 * NCCLs, with v5 and v6 of their own, still load a v4 plugin).
 *
 * Only the members before and including the ones gpufl reads matter for
 * reading; the unions here hold just the collective and point-to-point
 * descriptions, the kinds gpufl asks for. Field types are NCCL's own C
 * types (int, size_t, pointers) so the layout is the platform's C layout,
 * as NCCL's is.
 */
#ifndef GPUFL_INJECT_NCCL_PROFILER_ABI_H
#define GPUFL_INJECT_NCCL_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int gpufl__nccl_result; /* ncclResult_t; 0 is ncclSuccess */
#define GPUFL__NCCL_SUCCESS 0

/* event type bits of the activation mask and of a description's type */
#define GPUFL__NCCL_PROFILE_GROUP (1 << 0)
#define GPUFL__NCCL_PROFILE_COLL (1 << 1)
#define GPUFL__NCCL_PROFILE_P2P (1 << 2)

typedef void (*gpufl__nccl_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

/* ---- version 2 (NCCL 2.24, 2.25) ----------------------------------------- */

typedef struct gpufl__nccl_descr_v2 {
    uint8_t type; /* GPUFL__NCCL_PROFILE_* */
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            size_t traffic_bytes;
            uint8_t max_channels;
            uint8_t warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
    };
} gpufl__nccl_descr_v2;

/* ---- version 3 (NCCL 2.26): v2 without traffic_bytes ---------------------- */

typedef struct gpufl__nccl_descr_v3 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t max_channels;
            uint8_t warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
    };
} gpufl__nccl_descr_v3;

/* v2 and v3 share their table: init learns nothing of the communicator,
 * which each description names instead */
typedef struct gpufl__nccl_profiler_v3 {
    const char *name;
    gpufl__nccl_result (*init)(void **context, int *activation_mask);
    gpufl__nccl_result (*start_event)(void *context, void **handle, void *descr);
    gpufl__nccl_result (*stop_event)(void *handle);
    gpufl__nccl_result (*record_event_state)(void *handle, int state, void *state_args);
    gpufl__nccl_result (*finalize)(void *context);
} gpufl__nccl_profiler_v3;

/* ---- version 4 (NCCL 2.27 and later) -------------------------------------- */

typedef struct gpufl__nccl_descr_v4 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t channels;
            uint8_t warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t channels;
        } p2p;
    };
} gpufl__nccl_descr_v4;

typedef struct gpufl__nccl_profiler_v4 {
    const char *name;
    gpufl__nccl_result (*init)(void **context, int *activation_mask, const char *comm_name, uint64_t comm_hash,
                               int nnodes, int nranks, int rank, gpufl__nccl_logger log);
    gpufl__nccl_result (*start_event)(void *context, void **handle, gpufl__nccl_descr_v4 *descr);
    gpufl__nccl_result (*stop_event)(void *handle);
    gpufl__nccl_result (*record_event_state)(void *handle, int state, void *state_args);
    gpufl__nccl_result (*finalize)(void *context);
} gpufl__nccl_profiler_v4;

#endif /* GPUFL_INJECT_NCCL_PROFILER_ABI_H */
