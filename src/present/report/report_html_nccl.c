/*
 * The HTML report's NCCL section, only for a session with NCCL kernels:
 * the text report's figures as two sortable tables, NCCL time against
 * other kernels per device and time per collective, algorithm and protocol
 * (ana_nccl.h; docs/REPORT.md).
 */
#include <inttypes.h>
#include <stdio.h>

#include "analyze/ana_nccl.h"
#include "present/report/report_html_parts.h"

static void td_ns(gpufl__hout *o, uint64_t ns)
{
    char buf[32];
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%s</td>", ns, gpufl__hfmt_ns(buf, sizeof buf, ns));
}

static void td_pct(gpufl__hout *o, double pct)
{
    gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", pct, pct);
}

static const char *or_dash(const char *s) { return s[0] ? s : "-"; }

static void devices(gpufl__hout *o, const gpufl__nccl_report *n)
{
    static const char *const cols[] = {"GPU",          "NCCL time", "compute time", "overlapped",
                                       "overlapped %", "span",      "of busy",      NULL};
    gpufl__html_table_head(o, "nccl-devices", cols);
    for (size_t i = 0; i < n->noverlap; i++) {
        const gpufl__nccl_overlap *w = &n->overlap[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_u64(o, w->device);
        td_ns(o, w->comm_ns);
        td_ns(o, w->compute_ns);
        td_ns(o, w->overlap_ns);
        td_pct(o, w->comm_ns ? (double)w->overlap_ns * 100.0 / (double)w->comm_ns : 0);
        td_ns(o, w->span_ns);
        if (w->busy_ns)
            td_pct(o, (double)w->comm_ns * 100.0 / (double)w->busy_ns);
        else
            gpufl__html_td_text(o, "-");
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

static void collectives(gpufl__hout *o, const gpufl__nccl_report *n)
{
    static const char *const cols[] = {"GPU",     "collective", "algorithm", "protocol", "kernels", "time",
                                       "of busy", "max",        "bytes",     "alg bw",   "bus bw",  NULL};
    gpufl__html_table_head(o, "nccl-collectives", cols);
    for (size_t i = 0; i < n->nrows; i++) {
        const gpufl__nccl_row *w = &n->rows[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_u64(o, w->device);
        gpufl__html_td_text(o, gpufl__nccl_coll_name(w->coll));
        gpufl__html_td_text(o, or_dash(gpufl__nccl_algo_name(w->algo)));
        gpufl__html_td_text(o, or_dash(gpufl__nccl_proto_name(w->proto)));
        gpufl__html_td_u64(o, w->count);
        td_ns(o, w->total_ns);
        if (w->busy_pct > 0)
            td_pct(o, w->busy_pct);
        else
            gpufl__html_td_text(o, "-");
        td_ns(o, w->max_ns);
        if (w->bytes_known)
            gpufl__html_td_bytes(o, w->bytes);
        else
            gpufl__html_td_text(o, "unknown");
        char alg[32] = "-", bus[32] = "-";
        if (w->bw_ns) {
            snprintf(alg, sizeof alg, "%.2f GB/s", w->alg_bytes / (double)w->bw_ns);
            snprintf(bus, sizeof bus, "%.2f GB/s", w->bus_bytes / (double)w->bw_ns);
        }
        gpufl__html_td_text(o, alg);
        gpufl__html_td_text(o, bus);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

void gpufl__html_nccl(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    (void)t;
    const gpufl__nccl_report *n = r->nccl;
    if (!n)
        return;
    gpufl__hout_raw(o, "<section id=nccl><h2>NCCL</h2>\n<p>NCCL kernels against the other kernels of each GPU: "
                       "times are unions of intervals, so kernels that ran at once count once; overlapped is the "
                       "time both ran. Algorithm and protocol are what the kernel names say: NCCL names the kernel "
                       "it specialised (LL whatever protocol ran; since 2.19 Ring for every algorithm but Tree). "
                       "Bytes are count &times; datatype size as NCCL's profiler plugin gave them; alg bw is the "
                       "size (&times; n for AllGather and ReduceScatter) over kernel time, bus bw alg bw &times; "
                       "2(n-1)/n for AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for the rest.</p>\n");
    if (n->ops.bytes_note[0]) {
        gpufl__hout_raw(o, "<p>");
        gpufl__hout_text(o, n->ops.bytes_note);
        gpufl__hout_raw(o, "</p>\n");
    }
    devices(o, n);
    collectives(o, n);
    gpufl__hout_raw(o, "</section>\n");
}
