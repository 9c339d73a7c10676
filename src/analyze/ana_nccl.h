/*
 * NCCL in one session: which kernels are NCCL's and what their names say
 * (collective, algorithm, protocol, reduction, data type), the NCCL kernels
 * of a trace in start order, time per collective, and communication against
 * computation per device. Pure functions over a gpufl_trace; the one-session
 * report's "NCCL" section and the multi-rank job analyses build on them.
 *
 * What the kernel names are (NCCL's own sources, src/device/generate.py and
 * before 2.19 src/collectives/device/common.h):
 *
 *   >= 2.19  ncclDevKernel_<Coll>[_<Redop>_<type>]_<ALGO>_<PROTO>, or
 *            ncclDevKernel_SendRecv, ncclDevKernel_Generic
 *   >= 2.27  ncclSymDevKernel_ / ncclSymkDevKernel_<Coll>_<algo>[_<red>_<type>]
 *            (symmetric-memory kernels)
 *   2.8-2.18 ncclKernel_<Coll>_<ALGO>_<PROTO>_<Redop>_<ctype>
 *   <= 2.7   nccl<Coll>[Ring|Tree|CollNet][LL]Kernel_<op>_<type>
 *
 * A name is that of the kernel NCCL specialised, which is not always the
 * function it ran: every name says LL (NCCL runs LL128 and Simple through
 * the LL kernel), and from 2.19 on RING stands for every algorithm but TREE
 * (NVLS, CollNet and PAT run in the RING kernel). kind.flags says which
 * parts of a kind are such a specialisation.
 *
 * Bytes: no gpufl trace holds them today. NCCL gives a collective's size
 * only as the payload of its NVTX range ("ncclAllReduce" in domain NCCL,
 * an extended payload with "Message size [bytes]"), and gpufl's NVTX
 * recording keeps a range's text and domain, not its payload; PyTorch's
 * op ranges ("nccl:all_reduce") lose their sizes the same way
 * (backend/cupti/torch_nvtx.h). So ops carry bytes 0 ("unknown"), and the
 * summary adds up bytes only where an op has them, for a source that may
 * give them later.
 *
 * Threads: any; nothing here writes the trace. Sizes: per kernel one test
 * of its launch configuration's cached kind; memory per NCCL kernel (the
 * ops) and per device.
 */
#ifndef GPUFL_ANALYZE_ANA_NCCL_H
#define GPUFL_ANALYZE_ANA_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"

/* What an NCCL kernel's name says. */
enum gpufl__nccl_coll {
    GFL_NCCL_NONE = 0,
    GFL_NCCL_ALL_REDUCE,
    GFL_NCCL_ALL_GATHER, /* AllGatherV too */
    GFL_NCCL_REDUCE_SCATTER,
    GFL_NCCL_BROADCAST,
    GFL_NCCL_REDUCE,
    GFL_NCCL_SEND_RECV, /* the point-to-point kernel: sends, receives or both */
    GFL_NCCL_SEND,      /* a SendRecv kernel launched inside ncclSend (its NVTX range) */
    GFL_NCCL_RECV,      /* ... inside ncclRecv */
    GFL_NCCL_OTHER,     /* an NCCL kernel whose name does not say (ncclDevKernel_Generic) */
    GFL_NCCL_COLL_COUNT
};

enum gpufl__nccl_algo {
    GFL_NCCL_ALGO_UNKNOWN = 0,
    GFL_NCCL_ALGO_RING,
    GFL_NCCL_ALGO_TREE,
    GFL_NCCL_ALGO_COLLNET_DIRECT,
    GFL_NCCL_ALGO_COLLNET_CHAIN,
    GFL_NCCL_ALGO_NVLS,
    GFL_NCCL_ALGO_NVLS_TREE,
    GFL_NCCL_ALGO_PAT,
    GFL_NCCL_ALGO_COLLNET,   /* NCCL <= 2.7's CollNet, before it split into direct and chain */
    GFL_NCCL_ALGO_SYMMETRIC, /* a symmetric-memory kernel (ncclSym[k]DevKernel_) */
    GFL_NCCL_ALGO_COUNT
};

enum gpufl__nccl_proto {
    GFL_NCCL_PROTO_UNKNOWN = 0,
    GFL_NCCL_PROTO_LL,
    GFL_NCCL_PROTO_LL128,
    GFL_NCCL_PROTO_SIMPLE,
    GFL_NCCL_PROTO_COUNT
};

/* gpufl__nccl_kind.flags */
/* algo is the kernel's specialisation: from 2.19 RING stands for every algorithm but TREE */
#define GFL_NCCL_FLAG_ALGO_SPECIALISED 1u
/* proto is the kernel's specialisation (every name says LL), not the protocol that ran */
#define GFL_NCCL_FLAG_PROTO_SPECIALISED 2u
/* redop is the kernel's specialisation: every name before the symmetric kernels says Sum */
#define GFL_NCCL_FLAG_REDOP_SPECIALISED 4u

typedef struct gpufl__nccl_kind {
    uint8_t coll, algo, proto; /* gpufl__nccl_coll, _algo, _proto */
    char redop[8];             /* reductions: as the name spells it ("Sum", "sum", "avg"); "" none or too long */
    char dtype[12];            /* reductions: NCCL's short form ("f32", "bf16", "u8", "f8e4m3"); "" none.
                                  Gathers, broadcasts and SendRecv have neither: their names carry
                                  placeholders (Sum, int8_t) or nothing */
    /* Appended fields. */
    uint8_t flags; /* GFL_NCCL_FLAG_* */
} gpufl__nccl_kind;

/* Classifies a kernel name, demangled ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
 * or mangled ("_Z38ncclDevKernel_..."). False, with *out zeroed, when it is not an NCCL kernel (NULL too). */
bool gpufl__nccl_classify(const char *kernel_name, gpufl__nccl_kind *out);
const char *gpufl__nccl_coll_name(unsigned coll);   /* "AllReduce", ...; "" for NONE or out of range */
const char *gpufl__nccl_algo_name(unsigned algo);   /* "Ring", "Tree", ...; "" unknown */
const char *gpufl__nccl_proto_name(unsigned proto); /* "LL", "LL128", "Simple"; "" unknown */

/* The collective an NVTX range of NCCL's API names ("ncclAllReduce", "ncclSend", ...); GFL_NCCL_NONE for any
 * other text (NULL too). */
unsigned gpufl__nccl_coll_of_api(const char *nvtx_name);

/* One NCCL kernel of the trace, in start order. */
typedef struct gpufl__nccl_op {
    uint64_t start_ns, end_ns; /* session clock */
    uint32_t kernel_row;       /* row of gpufl_trace_get_kernels() */
    uint32_t stream_row;       /* row of the streams table */
    uint16_t device;
    gpufl__nccl_kind kind; /* from the name; coll refined from the launch's NVTX range where the name does
                              not tell (Generic, SendRecv: see coll_from_nvtx) */
    uint64_t bytes;        /* with has_bytes: count x datatype size of the nccl_coll event matched to it
                              (gpufl__nccl_bytes_attach); 0 otherwise */
    /* Appended fields. */
    uint8_t coll_from_nvtx; /* 1: kind.coll comes from the NCCL API range the kernel was launched in
                               ("ncclSend" makes a SendRecv kernel SEND) */
    uint8_t has_bytes;      /* bytes is known */
    uint8_t api_coll;       /* the collective the matched nccl_coll event names (gpufl__nccl_coll), 0 none */
    uint32_t nranks;        /* ranks of its communicator, from the nccl_coll event; 0 unknown */
} gpufl__nccl_op;

typedef struct gpufl__nccl_ops {
    size_t n;
    gpufl__nccl_op *op;
    /* Appended fields: the nccl_coll events (NCCL's profiler plugin) and how they were matched */
    size_t recorded;      /* nccl_coll events in the trace */
    size_t matched;       /* ops given bytes from them */
    char bytes_note[320]; /* why some or all ops have no bytes, and how they were paired; "" when plain */
} gpufl__nccl_ops;

/* The bytes of NCCL's kernels, from the nccl_coll events NCCL's profiler
 * plugin recorded (one per collective as it was enqueued). The rule: a
 * communicator's collectives go to one NCCL stream in the order they are
 * enqueued, so the k-th nccl_coll event of a communicator is the k-th NCCL
 * kernel of its stream. Communicators and NCCL streams are paired by order
 * of first use (the first communicator to enqueue with the first stream to
 * run an NCCL kernel), which is exact with one communicator and an
 * assumption with several, said in the note. A communicator whose count of
 * events differs from its stream's count of kernels (grouped calls that
 * NCCL fuses into one kernel, a trace window that missed kernels), or
 * whose k-th event names another collective than its k-th kernel, gets no
 * bytes at all, and the note says so: nothing is guessed. Sets op bytes,
 * has_bytes, nranks and api_coll, and ops->recorded, matched and
 * bytes_note. 0, or GPUFL_ENOMEM (ops without bytes). */
int gpufl__nccl_bytes_attach(const gpufl_trace *t, gpufl__nccl_ops *ops) __attribute__((warn_unused_result));

/* The collective (gpufl__nccl_coll) NCCL's name of an operation gives
 * ("AllReduce", "Send", ...); GFL_NCCL_OTHER for a name it does not know,
 * GFL_NCCL_NONE for NULL or "". */
unsigned gpufl__nccl_coll_of_func(const char *func);

/* Bandwidths as nccl-tests defines them. The algorithm's size S is the
 * bytes recorded (count x datatype size), times n for AllGather and
 * ReduceScatter, whose count is one rank's part; algorithm bandwidth is
 * S / time, bus bandwidth S x factor / time, the factor being 2(n-1)/n
 * for AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for
 * Broadcast, Reduce, Send, Recv and SendRecv. Sets *alg_bytes (S) and
 * *bus_bytes (S x factor); false when the collective has no such factor
 * (Other) or n (ranks of the communicator) is needed and unknown (0). */
bool gpufl__nccl_bw_bytes(unsigned coll, uint64_t bytes, uint32_t n, double *alg_bytes, double *bus_bytes);

/* The trace's NCCL kernels, in the kernels table's order (start, then as
 * recorded), so kernel_row ascends. 0, GPUFL_EINVAL (NULL argument) or
 * GPUFL_ENOMEM, *out then empty. */
int gpufl__nccl_ops_of(const gpufl_trace *t, gpufl__nccl_ops *out) __attribute__((warn_unused_result));
void gpufl__nccl_ops_free(gpufl__nccl_ops *o);

/* Communication against computation on one device: NCCL kernel time, other kernels' time (both as unions of
 * intervals, so concurrent kernels are not counted twice), and the time both ran at once. span_ns: from the
 * device's first kernel start to its last kernel end. */
typedef struct gpufl__nccl_overlap {
    uint16_t device;
    uint64_t comm_ns, compute_ns, overlap_ns, span_ns;
    /* Appended fields. */
    uint64_t busy_ns; /* the device's GPU busy time (kernels, copies, memsets; gpufl__ana_device_summary);
                         filled by gpufl__nccl_report_of, 0 from gpufl__nccl_overlap_of */
} gpufl__nccl_overlap;

/* One row per device with NCCL kernels, by device. ops: from gpufl__nccl_ops_of on the same trace (kernel_row
 * ascending). 0 with *out malloc'd (free()) and *n set, NULL and 0 without ops; GPUFL_EINVAL for a NULL
 * argument or ops not ascending in kernel_row or past the kernels; GPUFL_ENOMEM. */
int gpufl__nccl_overlap_of(const gpufl_trace *t, const gpufl__nccl_ops *ops, gpufl__nccl_overlap **out, size_t *n)
    __attribute__((warn_unused_result));

/* Time per collective: one row per (device, coll, algo, proto). */
typedef struct gpufl__nccl_row {
    uint16_t device;
    uint8_t coll, algo, proto;
    uint8_t flags;        /* the GFL_NCCL_FLAG_* bits of any of its ops */
    uint64_t count;       /* kernels */
    uint64_t total_ns;    /* sum of their durations */
    uint64_t max_ns;      /* the longest */
    uint64_t bytes;       /* summed over the ops whose bytes were known; 0 unknown */
    uint64_t bytes_known; /* ops whose bytes were known (bytes is theirs alone when < count) */
    double busy_pct;      /* total_ns / the device's GPU busy time * 100; filled by gpufl__nccl_report_of,
                              0 from gpufl__nccl_summary_of and when the busy time is unknown */
    /* Appended fields: bandwidth over the ops gpufl__nccl_bw_bytes could size */
    uint64_t bw_ns;              /* their kernel time */
    double alg_bytes, bus_bytes; /* their S and S x factor: alg_bytes / bw_ns is GB/s */
} gpufl__nccl_row;

/* Rows by device, then total_ns descending, then coll, algo, proto. 0 with *out malloc'd (free()) and *n set
 * (NULL and 0 without ops); GPUFL_EINVAL for a NULL argument; GPUFL_ENOMEM, *out NULL. */
int gpufl__nccl_summary_of(const gpufl__nccl_ops *ops, gpufl__nccl_row **out, size_t *n)
    __attribute__((warn_unused_result));

/* What the one-session report shows (gpufl__ana_report.nccl). */
typedef struct gpufl__nccl_report {
    gpufl__nccl_ops ops;
    gpufl__nccl_row *rows; /* gpufl__nccl_summary_of, busy_pct filled */
    size_t nrows;
    gpufl__nccl_overlap *overlap; /* gpufl__nccl_overlap_of, busy_ns filled */
    size_t noverlap;
} gpufl__nccl_report;

/* Everything above for t; s: the trace's summary (per device busy time), or NULL (busy time unknown). 0 with
 * *out NULL when the trace has no NCCL kernel, else a report to free with gpufl__nccl_report_free;
 * GPUFL_EINVAL, GPUFL_ENOMEM (*out NULL). */
int gpufl__nccl_report_of(const gpufl_trace *t, const gpufl__ana_summary *s, gpufl__nccl_report **out)
    __attribute__((warn_unused_result));
void gpufl__nccl_report_free(gpufl__nccl_report *r);

#endif /* GPUFL_ANALYZE_ANA_NCCL_H */
