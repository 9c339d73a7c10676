/*
 * The text report's NCCL section, only for a session with NCCL kernels:
 * per device, NCCL time and how much of it ran alongside other kernels,
 * then time per collective, algorithm and protocol as the kernel names say
 * them (ana_nccl.h; docs/REPORT.md).
 */
#include <inttypes.h>

#include "analyze/ana_nccl.h"
#include "present/report/report_text_util.h"

/* The bytes of a row: "unknown" when no op had them, "N of M ops" when some did. */
static void bytes_text(const gpufl__nccl_row *w, char *buf, size_t len)
{
    if (!w->bytes_known)
        snprintf(buf, len, "unknown");
    else if (w->bytes_known < w->count)
        snprintf(buf, len, "%s in %" PRIu64 " ops", gpufl__rt_bytes(w->bytes).s, w->bytes_known);
    else
        snprintf(buf, len, "%s", gpufl__rt_bytes(w->bytes).s);
}

static const char *or_dash(const char *s) { return s[0] ? s : "-"; }

/* GB/s (bytes per ns) over the row's sized ops; "-" when none could be sized. */
static void bw_text(double bytes, uint64_t ns, char *buf, size_t len)
{
    if (!ns)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f GB/s", bytes / (double)ns);
}

static void device_line(const rt *c, const gpufl__nccl_overlap *o)
{
    fprintf(c->out, "  GPU %u: NCCL %s, %s overlapped with compute (compute kernels %s, span %s", o->device,
            gpufl__rt_dur(o->comm_ns).s, gpufl__rt_pct(gpufl__rt_share(o->overlap_ns, o->comm_ns)).s,
            gpufl__rt_dur(o->compute_ns).s, gpufl__rt_dur(o->span_ns).s);
    if (o->busy_ns)
        fprintf(c->out, "; %s of GPU busy time", gpufl__rt_pct(gpufl__rt_share(o->comm_ns, o->busy_ns)).s);
    fprintf(c->out, ")\n");
}

void gpufl__rt_section_nccl(const rt *c)
{
    const gpufl__nccl_report *n = c->r->nccl;
    if (!n)
        return;
    FILE *out = c->out;
    gpufl__rt_title(c, "NCCL");
    for (size_t i = 0; i < n->noverlap; i++)
        device_line(c, &n->overlap[i]);
    fprintf(out, "  %3s %-14s %-13s %-8s %9s %10s %8s %10s %12s %12s  %s\n", "GPU", "collective", "algorithm",
            "protocol", "kernels", "time", "of busy", "max", "alg bw", "bus bw", "bytes");
    unsigned flags = 0;
    for (size_t i = 0; i < n->nrows; i++) {
        const gpufl__nccl_row *w = &n->rows[i];
        char bytes[64], alg[32], bus[32];
        bytes_text(w, bytes, sizeof bytes);
        bw_text(w->alg_bytes, w->bw_ns, alg, sizeof alg);
        bw_text(w->bus_bytes, w->bw_ns, bus, sizeof bus);
        fprintf(out, "  %3u %-14s %-13s %-8s %9s %10s %8s %10s %12s %12s  %s\n", w->device,
                gpufl__nccl_coll_name(w->coll), or_dash(gpufl__nccl_algo_name(w->algo)),
                or_dash(gpufl__nccl_proto_name(w->proto)), gpufl__rt_count(w->count).s, gpufl__rt_dur(w->total_ns).s,
                w->busy_pct > 0 ? gpufl__rt_pct(w->busy_pct).s : "-", gpufl__rt_dur(w->max_ns).s, alg, bus, bytes);
        flags |= w->flags;
    }
    fprintf(out, "  (overlap: the time NCCL kernels and other kernels ran at once, each counted once however\n"
                 "   many ran; bytes: count x datatype size as NCCL's profiler plugin gave them; alg bw: size /\n"
                 "   kernel time, the size x n for AllGather and ReduceScatter; bus bw: alg bw x 2(n-1)/n for\n"
                 "   AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for Broadcast, Reduce, Send, Recv)\n");
    if (n->ops.bytes_note[0])
        fprintf(out, "  (%s)\n", n->ops.bytes_note);
    if (flags & (GFL_NCCL_FLAG_ALGO_SPECIALISED | GFL_NCCL_FLAG_PROTO_SPECIALISED))
        fprintf(out,
                "  (algorithm and protocol as the kernel names say: NCCL names the kernel it specialised,\n"
                "   LL whatever protocol ran%s)\n",
                flags & GFL_NCCL_FLAG_ALGO_SPECIALISED ? ", and since 2.19 Ring for every algorithm but Tree" : "");
}
