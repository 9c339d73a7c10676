/*
 * The JSON report's NCCL member (docs/REPORT.md, `nccl`), written only for
 * a session with NCCL kernels, so that reports of other sessions keep their
 * members: per device the overlap of NCCL and other kernels, and a row per
 * device, collective, algorithm and protocol (ana_nccl.h).
 */
#include "analyze/ana_nccl.h"
#include "present/report/report_json_parts.h"

static void device(jw *w, const gpufl__nccl_overlap *o)
{
    gpufl__jw_obj(w, NULL);
    gpufl__jw_u64(w, "device", o->device);
    gpufl__jw_u64(w, "comm_ns", o->comm_ns);
    gpufl__jw_u64(w, "compute_ns", o->compute_ns);
    gpufl__jw_u64(w, "overlap_ns", o->overlap_ns);
    gpufl__jw_real(w, "overlap_pct", o->comm_ns ? (double)o->overlap_ns * 100.0 / (double)o->comm_ns : 0, 3);
    gpufl__jw_u64(w, "span_ns", o->span_ns);
    gpufl__jw_u64(w, "busy_ns", o->busy_ns);
    gpufl__jw_obj_end(w);
}

static void row(jw *w, const gpufl__nccl_row *r)
{
    gpufl__jw_obj(w, NULL);
    gpufl__jw_u64(w, "device", r->device);
    gpufl__jw_str(w, "collective", gpufl__nccl_coll_name(r->coll));
    gpufl__jw_str(w, "algorithm", gpufl__nccl_algo_name(r->algo));
    gpufl__jw_str(w, "protocol", gpufl__nccl_proto_name(r->proto));
    gpufl__jw_bool(w, "algorithm_specialised", (r->flags & GFL_NCCL_FLAG_ALGO_SPECIALISED) != 0);
    gpufl__jw_bool(w, "protocol_specialised", (r->flags & GFL_NCCL_FLAG_PROTO_SPECIALISED) != 0);
    gpufl__jw_u64(w, "kernels", r->count);
    gpufl__jw_u64(w, "total_ns", r->total_ns);
    gpufl__jw_u64(w, "max_ns", r->max_ns);
    gpufl__jw_real(w, "busy_pct", r->busy_pct, 3);
    if (r->bytes_known)
        gpufl__jw_u64(w, "bytes", r->bytes);
    else
        gpufl__jw_null(w, "bytes");
    gpufl__jw_u64(w, "bytes_known", r->bytes_known);
    if (r->bw_ns) { /* GB/s over the kernels with bytes (ana_nccl.h, gpufl__nccl_bw_bytes) */
        gpufl__jw_real(w, "algbw_gbps", r->alg_bytes / (double)r->bw_ns, 3);
        gpufl__jw_real(w, "busbw_gbps", r->bus_bytes / (double)r->bw_ns, 3);
    } else {
        gpufl__jw_null(w, "algbw_gbps");
        gpufl__jw_null(w, "busbw_gbps");
    }
    gpufl__jw_obj_end(w);
}

void gpufl__rj_nccl(jw *w, const gpufl__ana_report *r)
{
    const gpufl__nccl_report *n = r->nccl;
    if (!n)
        return;
    gpufl__jw_obj(w, "nccl");
    gpufl__jw_u64(w, "kernels", n->ops.n);
    gpufl__jw_u64(w, "recorded_collectives", n->ops.recorded); /* nccl_coll events: NCCL's profiler plugin */
    gpufl__jw_u64(w, "kernels_with_bytes", n->ops.matched);
    gpufl__jw_str(w, "bytes_note", n->ops.bytes_note);
    gpufl__jw_arr(w, "devices");
    for (size_t i = 0; i < n->noverlap; i++)
        device(w, &n->overlap[i]);
    gpufl__jw_arr_end(w);
    gpufl__jw_arr(w, "collectives");
    for (size_t i = 0; i < n->nrows; i++)
        row(w, &n->rows[i]);
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}
