/*
 * The CSV export: one RFC 4180 file per table of the trace, for
 * spreadsheets, pandas and SQL loaders:
 *
 *   kernels.csv  copies.csv  memsets.csv  syncs.csv  memory.csv
 *   scopes.csv   nvtx.csv    device_samples.csv      host_samples.csv
 *   triggers.csv trace_windows.csv
 *
 * Each starts with a header row; every row ends in CRLF; a field holding
 * a comma, a quote, CR or LF is quoted, its quotes doubled (names of C++
 * kernels have commas). Times are session-clock nanoseconds (the trace's
 * CLOCK_MONOTONIC); a duration is end - start. A value that was not
 * recorded is an empty field, never a made-up 0: a sample field outside
 * the sample's `valid` bits, a launch's API times when its call is
 * unknown. A scope or NVTX range that never ended (the program died inside
 * it) ends at the session's last recorded time, as in every output, and
 * says so in its `unended` column (1). nvtx.csv's `seq` is PyTorch's
 * sequence number of an op's range (docs/FORMAT.md), empty for other
 * ranges. memory.csv's `failed` is 1 for an allocation that failed for
 * lack of memory (it allocated nothing). A trace window that never closed
 * ends at the session's end, `unended` 1, as in every output. Kinds are
 * written as names (HtoD,
 * stream, pinned), ids of strings as their text.
 *
 * Every file of a table is written even when the table is empty (a header
 * alone), so a script finds the same files for every session. The files
 * are written to temporaries and renamed into place together once all of
 * them are complete. Single-threaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/event.h"
#include "present/export/export.h"
#include "present/export/export_out.h"

typedef struct csv {
    const gpufl__rows *x;
    gpufl__xout *out;
    int first; /* no field yet on this row */
} csv;

static void sep(csv *c)
{
    if (!c->first)
        gpufl__xout_char(c->out, ',');
    c->first = 0;
}

static void u64(csv *c, uint64_t v)
{
    sep(c);
    gpufl__xout_u64(c->out, v);
}

static void i64(csv *c, int64_t v)
{
    sep(c);
    gpufl__xout_i64(c->out, v);
}

static void empty(csv *c) { sep(c); }

static void empties(csv *c, int n)
{
    while (n-- > 0)
        sep(c);
}

/* v when known (non-zero), else an empty field. */
static void u64_or_empty(csv *c, uint64_t v)
{
    if (v)
        u64(c, v);
    else
        empty(c);
}

static void hex(csv *c, uint64_t v)
{
    char buf[24];
    int n = snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    sep(c);
    gpufl__xout_write(c->out, buf, (size_t)n);
}

/* Fixed point with two decimals: x100 values (CPU %). */
static void x100(csv *c, uint32_t v)
{
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%u.%02u", v / 100, v % 100);
    sep(c);
    gpufl__xout_write(c->out, buf, (size_t)n);
}

/* A text field, quoted when RFC 4180 needs it. */
static void str(csv *c, const char *s)
{
    sep(c);
    if (!s[strcspn(s, ",\"\r\n")]) {
        gpufl__xout_str(c->out, s);
        return;
    }
    gpufl__xout_char(c->out, '"');
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        gpufl__xout_write(c->out, s, (size_t)(q - s) + 1);
        gpufl__xout_char(c->out, '"');
    }
    gpufl__xout_str(c->out, s);
    gpufl__xout_char(c->out, '"');
}

static void text(csv *c, uint32_t id) { str(c, gpufl__rows_str(c->x, id)); }

static void row_end(csv *c)
{
    gpufl__xout_write(c->out, "\r\n", 2);
    gpufl__xout_flush_some(c->out);
    c->first = 1;
}

/* start, end, duration; end and duration empty when there is no end. */
static void times(csv *c, uint64_t start, uint64_t end)
{
    u64(c, start);
    if (end == 0) {
        empty(c);
        empty(c);
        return;
    }
    u64(c, end);
    if (end >= start)
        u64(c, end - start);
    else
        i64(c, -(int64_t)(start - end)); /* damaged input: shown as it is */
}

static void api_times(csv *c, uint64_t api_start, uint64_t api_end)
{
    u64_or_empty(c, api_start);
    u64_or_empty(c, api_start ? api_end : 0);
}

/* device, context, stream, correlation: where a row of device work ran. */
static void stream_cols(csv *c, uint32_t device, uint32_t context, uint32_t stream, uint32_t correlation)
{
    u64(c, device);
    u64(c, context);
    u64(c, stream);
    u64(c, correlation);
}

/* tid, scope_id, external_id of the call behind a row; empty when unknown. */
static void caller_cols(csv *c, uint32_t tid, uint64_t scope, uint64_t external_id)
{
    u64_or_empty(c, tid);
    u64_or_empty(c, scope);
    u64_or_empty(c, external_id);
}

/* ---- one function per table: its header and its rows ---------------------- */

static const char kernels_header[] =
    "start_ns,end_ns,duration_ns,device,context,stream,correlation,name,mangled_name,"
    "grid_x,grid_y,grid_z,block_x,block_y,block_z,registers,static_smem_bytes,dynamic_smem_bytes,"
    "local_mem_bytes,occupancy,occupancy_limiter,tid,scope_id,nvtx_range,external_id,external_kind,"
    "stack_id,graph_id,api_start_ns,api_end_ns";

static size_t kernels_rows(csv *c)
{
    size_t n = gpufl__rows_n(c->x, GPUFL__TBL_KERNEL);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__kernel_row k;
        gpufl__kernel_row_get(c->x, i, &k);
        times(c, k.start, k.end);
        stream_cols(c, k.device, k.context, k.stream, k.correlation);
        text(c, k.name ? k.name : k.mangled);
        text(c, k.mangled ? k.mangled : k.name);
        for (int d = 0; d < 3; d++)
            u64(c, k.grid[d]);
        for (int d = 0; d < 3; d++)
            u64(c, k.block[d]);
        u64(c, k.registers);
        u64(c, k.static_smem);
        u64(c, k.dynamic_smem);
        u64(c, k.local_mem);
        if (k.occupancy_x10000) {
            char buf[16];
            int len = snprintf(buf, sizeof buf, "%u.%04u", k.occupancy_x10000 / 10000, k.occupancy_x10000 % 10000);
            sep(c);
            gpufl__xout_write(c->out, buf, (size_t)len);
        } else {
            empty(c);
        }
        str(c, gpufl__limiter_name(k.limiter));
        u64_or_empty(c, k.tid);
        u64_or_empty(c, k.scope);
        text(c, k.nvtx);
        u64_or_empty(c, k.external_id);
        u64_or_empty(c, k.external_kind);
        u64_or_empty(c, k.stack);
        u64_or_empty(c, k.graph_id);
        api_times(c, k.api_start, k.api_end);
        row_end(c);
    }
    return n;
}

static const char copies_header[] =
    "start_ns,end_ns,duration_ns,device,context,stream,correlation,kind,bytes,src_kind,dst_kind,"
    "dst_device,tid,scope_id,external_id,graph_id,api_start_ns,api_end_ns";

static const char memsets_header[] =
    "start_ns,end_ns,duration_ns,device,context,stream,correlation,bytes,value,memory_kind,"
    "tid,scope_id,external_id,graph_id,api_start_ns,api_end_ns";

static size_t transfer_rows(csv *c, unsigned src)
{
    size_t n = gpufl__rows_n(c->x, src);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__transfer_row r;
        gpufl__transfer_row_get(c->x, src, i, &r);
        times(c, r.start, r.end);
        stream_cols(c, r.device, r.context, r.stream, r.correlation);
        if (src == GPUFL__TBL_COPY) {
            str(c, gpufl__copy_kind_name(r.kind));
            u64(c, r.bytes);
            str(c, gpufl__mem_kind_name(r.src_kind));
            str(c, gpufl__mem_kind_name(r.dst_kind));
            if (r.kind == GFL_COPY_PTOP)
                u64(c, r.dst_device);
            else
                empty(c);
        } else {
            u64(c, r.bytes);
            u64(c, r.value);
            str(c, gpufl__mem_kind_name(r.dst_kind));
        }
        caller_cols(c, r.tid, r.scope, r.external_id);
        u64_or_empty(c, r.graph_id);
        api_times(c, r.api_start, r.api_end);
        row_end(c);
    }
    return n;
}

static size_t copies_rows(csv *c) { return transfer_rows(c, GPUFL__TBL_COPY); }
static size_t memsets_rows(csv *c) { return transfer_rows(c, GPUFL__TBL_MEMSET); }

static const char syncs_header[] =
    "start_ns,end_ns,duration_ns,device,context,stream,correlation,kind,cuda_event,tid,scope_id,external_id";

static size_t syncs_rows(csv *c)
{
    size_t n = gpufl__rows_n(c->x, GPUFL__TBL_SYNC);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__sync_row r;
        gpufl__sync_row_get(c->x, i, &r);
        times(c, r.start, r.end);
        stream_cols(c, r.device, r.context, r.stream, r.correlation);
        str(c, gpufl__sync_kind_name(r.kind));
        u64_or_empty(c, r.cuda_event);
        caller_cols(c, r.tid, r.scope, r.external_id);
        row_end(c);
    }
    return n;
}

static const char memory_header[] =
    "ts_ns,op,address,bytes,memory_kind,device,context,stream,correlation,tid,scope_id,external_id,failed";

static size_t memory_rows(csv *c)
{
    size_t n = gpufl__m_n(c->x);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__mem_row r;
        gpufl__mem_row_get(c->x, i, &r);
        u64(c, r.ts);
        str(c, r.is_free ? "free" : "alloc");
        hex(c, r.address);
        u64(c, r.bytes);
        str(c, gpufl__mem_kind_name(r.kind));
        stream_cols(c, r.device, r.context, r.stream, r.correlation);
        caller_cols(c, r.tid, r.scope, r.external_id);
        u64(c, gpufl__m_failed(c->x, i));
        row_end(c);
    }
    return n;
}

static const char triggers_header[] = "ts_ns,kind,outcome,detail,dump,tid";

static size_t triggers_rows(csv *c)
{
    size_t n = c->x->triggers->n;
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__trigger_row g;
        gpufl__trigger_row_get(c->x, i, &g);
        u64(c, g.ts);
        text(c, g.kind);
        str(c, g.outcome < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name(g.outcome) : "unknown");
        text(c, g.detail);
        text(c, g.dump);
        u64_or_empty(c, g.tid);
        row_end(c);
    }
    return n;
}

static const char trace_windows_header[] = "index,begin_ns,end_ns,duration_ns,reason,detail,unended";

static size_t trace_windows_rows(csv *c)
{
    size_t n = c->x->windows->n;
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__window_row w;
        gpufl__window_row_get(c->x, i, &w);
        u64(c, w.index);
        times(c, w.begin, w.end);
        text(c, w.reason);
        text(c, w.detail);
        u64(c, w.unended);
        row_end(c);
    }
    return n;
}

static const char scopes_header[] = "begin_ns,end_ns,duration_ns,id,parent,depth,name,tid,implicit_end,unended";
static const char nvtx_header[] = "begin_ns,end_ns,duration_ns,name,domain,depth,tid,mark,unended,seq";

static size_t range_rows(csv *c, unsigned src)
{
    size_t n = gpufl__rows_n(c->x, src);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__range_row r;
        gpufl__range_row_get(c->x, src, i, &r);
        times(c, r.start, r.end);
        if (src == GPUFL__TBL_SCOPE) {
            u64(c, r.id);
            u64_or_empty(c, r.parent);
            u64(c, r.depth);
            text(c, r.name);
            u64(c, r.tid);
            u64(c, r.implicit);
        } else {
            text(c, r.name);
            text(c, r.domain);
            u64(c, r.depth);
            u64(c, r.tid);
            u64(c, r.instant);
        }
        u64(c, r.unended);
        if (src == GPUFL__TBL_NVTX) {
            if (r.has_seq) /* PyTorch's op sequence number; 0 is one */
                u64(c, r.seq);
            else
                empty(c);
        }
        row_end(c);
    }
    return n;
}

static size_t scopes_rows(csv *c) { return range_rows(c, GPUFL__TBL_SCOPE); }
static size_t nvtx_rows(csv *c) { return range_rows(c, GPUFL__TBL_NVTX); }

static const char device_samples_header[] =
    "ts_ns,device,gpu_util_pct,mem_util_pct,mem_used_bytes,mem_free_bytes,mem_total_bytes,temp_c,"
    "mem_temp_c,power_w,power_limit_w,energy_mj,sm_clock_mhz,mem_clock_mhz,gfx_clock_mhz,"
    "throttle_reasons,pcie_rx_kbps,pcie_tx_kbps,fan_pct,ecc_corrected,ecc_uncorrected,process_mem_bytes";

/* Watts from mW, exactly ("215.125"); empty when not known. */
static void watts(csv *c, int known, uint32_t mw)
{
    if (!known) {
        empty(c);
        return;
    }
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%u.%03u", mw / 1000, mw % 1000);
    sep(c);
    gpufl__xout_write(c->out, buf, (size_t)n);
}

/* A sample field: its value when its valid bit is set, else empty. */
static void maybe_u64(csv *c, int known, uint64_t v)
{
    if (known)
        u64(c, v);
    else
        empty(c);
}

static void maybe_i64(csv *c, int known, int64_t v)
{
    if (known)
        i64(c, v);
    else
        empty(c);
}

static size_t device_samples_rows(csv *c)
{
    size_t n = gpufl__d_n(c->x);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__dev_row s;
        gpufl__dev_row_get(c->x, i, &s);
#define HAS(bit) ((s.valid & (bit)) != 0)
        u64(c, s.ts);
        u64(c, s.device);
        maybe_u64(c, HAS(GPUFL__DS_GPU_UTIL), s.gpu_util_pct);
        maybe_u64(c, HAS(GPUFL__DS_MEM_UTIL), s.mem_util_pct);
        if (HAS(GPUFL__DS_MEMORY)) {
            u64(c, s.mem_used_bytes);
            u64_or_empty(c, s.mem_free_bytes);
            u64(c, s.mem_total_bytes);
        } else {
            empties(c, 3);
        }
        maybe_i64(c, HAS(GPUFL__DS_TEMP), s.temp_c);
        maybe_i64(c, HAS(GPUFL__DS_MEM_TEMP), s.mem_temp_c);
        watts(c, HAS(GPUFL__DS_POWER), s.power_mw);
        watts(c, HAS(GPUFL__DS_POWER_LIMIT), s.power_limit_mw);
        maybe_u64(c, HAS(GPUFL__DS_ENERGY), s.energy_mj);
        if (HAS(GPUFL__DS_CLOCKS)) {
            u64(c, s.sm_clock_mhz);
            u64(c, s.mem_clock_mhz);
            u64_or_empty(c, s.gfx_clock_mhz);
        } else {
            empties(c, 3);
        }
        if (HAS(GPUFL__DS_THROTTLE))
            hex(c, s.throttle_reasons);
        else
            empty(c);
        maybe_u64(c, HAS(GPUFL__DS_PCIE), s.pcie_rx_kbps);
        maybe_u64(c, HAS(GPUFL__DS_PCIE), s.pcie_tx_kbps);
        maybe_u64(c, HAS(GPUFL__DS_FAN), s.fan_pct);
        maybe_u64(c, HAS(GPUFL__DS_ECC), s.ecc_corrected);
        maybe_u64(c, HAS(GPUFL__DS_ECC), s.ecc_uncorrected);
        maybe_u64(c, HAS(GPUFL__DS_PROC_MEM), s.proc_mem_bytes);
#undef HAS
        row_end(c);
    }
    return n;
}

static const char host_samples_header[] =
    "ts_ns,process_cpu_pct,machine_cpu_pct,cpu_count,ram_used_bytes,ram_total_bytes,process_rss_bytes";

static size_t host_samples_rows(csv *c)
{
    size_t n = gpufl__h_n(c->x);
    for (size_t i = 0; i < n && !c->out->err; i++) {
        gpufl__host_row s;
        gpufl__host_row_get(c->x, i, &s);
        u64(c, s.ts);
        if (s.valid & GPUFL__HS_PROC_CPU)
            x100(c, s.proc_cpu_pct_x100);
        else
            empty(c);
        if (s.valid & GPUFL__HS_SYS_CPU)
            x100(c, s.sys_cpu_pct_x100);
        else
            empty(c);
        u64_or_empty(c, s.cpu_count);
        maybe_u64(c, (s.valid & GPUFL__HS_RAM) != 0, s.ram_used_bytes);
        maybe_u64(c, (s.valid & GPUFL__HS_RAM) != 0, s.ram_total_bytes);
        maybe_u64(c, (s.valid & GPUFL__HS_RSS) != 0, s.proc_rss_bytes);
        row_end(c);
    }
    return n;
}

typedef struct csv_table {
    const char *file;
    const char *header;
    size_t (*rows)(csv *c);
} csv_table;

static const csv_table tables[] = {
    {"kernels.csv", kernels_header, kernels_rows},
    {"copies.csv", copies_header, copies_rows},
    {"memsets.csv", memsets_header, memsets_rows},
    {"syncs.csv", syncs_header, syncs_rows},
    {"memory.csv", memory_header, memory_rows},
    {"scopes.csv", scopes_header, scopes_rows},
    {"nvtx.csv", nvtx_header, nvtx_rows},
    {"device_samples.csv", device_samples_header, device_samples_rows},
    {"host_samples.csv", host_samples_header, host_samples_rows},
    {"triggers.csv", triggers_header, triggers_rows},
    {"trace_windows.csv", trace_windows_header, trace_windows_rows},
};
#define NTABLES (sizeof tables / sizeof tables[0])

/* mkdir -p dir. 0, or -1 with errno. */
static int make_dirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        path[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int gpufl__export_csv(const gpufl_trace *t, const char *dir, gpufl__export_result *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    if (make_dirs(dir) != 0) {
        snprintf(err, err_len, "cannot create directory %s: %s", dir, strerror(errno));
        return GPUFL_EIO;
    }
    gpufl__rows x;
    gpufl__rows_open(&x, t);
    gpufl__xout outs[NTABLES];
    size_t opened = 0;
    int rc = 0;
    for (; opened < NTABLES; opened++) {
        char path[4200];
        if (snprintf(path, sizeof path, "%s/%s", dir, tables[opened].file) >= (int)sizeof path) {
            snprintf(err, err_len, "cannot write into %s: the path is too long", dir);
            rc = GPUFL_EINVAL;
            break;
        }
        gpufl__xout *o = &outs[opened];
        if (gpufl__xout_open(o, path, err, err_len) != 0) {
            rc = GPUFL_EIO;
            break;
        }
        csv c = {&x, o, 1};
        gpufl__xout_str(o, tables[opened].header);
        gpufl__xout_write(o, "\r\n", 2);
        r->rows += tables[opened].rows(&c);
        if (o->err == ENOMEM) {
            snprintf(err, err_len, "cannot write %s: out of memory", path);
            gpufl__xout_abort(o);
            rc = GPUFL_ENOMEM;
            break;
        }
        if (gpufl__xout_close(o, err, err_len) != 0) {
            rc = GPUFL_EIO; /* o released, its temporary removed */
            break;
        }
        r->bytes += o->bytes;
    }
    if (rc) {
        /* nothing appears: the temporaries written so far go too */
        for (size_t i = 0; i < opened; i++)
            gpufl__xout_abort(&outs[i]);
        r->rows = r->bytes = 0;
        return rc;
    }
    for (size_t i = 0; i < NTABLES; i++) {
        if (rc) {
            gpufl__xout_abort(&outs[i]);
        } else if (gpufl__xout_rename(&outs[i], err, err_len) != 0) {
            rc = GPUFL_EIO;
        } else {
            r->files++;
        }
    }
    return rc;
}
