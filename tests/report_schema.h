/*
 * The JSON report's schema (docs/REPORT.md, schema_version 1) as a table,
 * and a checker: every object must have exactly the listed members, of the
 * listed types. A field added to the report without being added here (and
 * to docs/REPORT.md) fails the tests, and so does one that went missing.
 */
#ifndef GPUFL_TESTS_REPORT_SCHEMA_H
#define GPUFL_TESTS_REPORT_SCHEMA_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

enum {
    S_INT,      /* integer */
    S_NUM,      /* integer or real */
    S_STR,      /* string */
    S_STR_NULL, /* string or null */
    S_INT_NULL, /* integer or null */
    S_NUM_NULL, /* number or null */
    S_BOOL,
    S_OBJ,          /* object of sub */
    S_OBJ_NULL,     /* object of sub, or null */
    S_ARR_OBJ,      /* array of objects of sub */
    S_ARR_INT,      /* array of integers */
    S_MAP_INT,      /* object of integers, any keys */
    S_ARR_STR,      /* array of strings */
    S_ARR_STR_NULL, /* array of strings, or null */
    S_OBJ_OPT,      /* object of sub, or absent (a section only some sessions have) */
};

typedef struct sfield {
    const char *key;
    int type;
    const struct sfield *sub;
} sfield;

static const sfield s_dist[] = {{"n", S_INT, 0},   {"total", S_INT, 0}, {"min", S_INT, 0},  {"max", S_INT, 0},
                                {"p50", S_INT, 0}, {"p95", S_INT, 0},   {"mean", S_NUM, 0}, {0, 0, 0}};

static const sfield s_device[] = {{"index", S_INT, 0},
                                  {"name", S_STR_NULL, 0},
                                  {"uuid", S_STR_NULL, 0},
                                  {"pci_bus_id", S_STR_NULL, 0},
                                  {"compute_capability", S_STR_NULL, 0},
                                  {"sm_count", S_INT, 0},
                                  {"memory_total_bytes", S_INT, 0},
                                  {0, 0, 0}};

static const sfield s_engine[] = {{"requested", S_STR_NULL, 0},
                                  {"ran", S_STR_NULL, 0},
                                  {"plugin", S_STR_NULL, 0},
                                  {"reason", S_STR_NULL, 0},
                                  {0, 0, 0}};

static const sfield s_job[] = {{"launcher", S_STR, 0},
                               {"rank", S_INT_NULL, 0},
                               {"local_rank", S_INT_NULL, 0},
                               {"world_size", S_INT_NULL, 0},
                               {"local_world_size", S_INT_NULL, 0},
                               {"id", S_STR_NULL, 0},
                               {"step", S_STR_NULL, 0},
                               {"master", S_STR_NULL, 0},
                               {0, 0, 0}};

static const sfield s_session[] = {{"session_id", S_STR_NULL, 0},
                                   {"app_name", S_STR_NULL, 0},
                                   {"pid", S_INT, 0},
                                   {"host", S_STR_NULL, 0},
                                   {"gpufl_version", S_STR_NULL, 0},
                                   {"source_format", S_STR, 0},
                                   {"format_version", S_INT, 0},
                                   {"start_ns", S_INT, 0},
                                   {"start_wall_ns", S_INT, 0},
                                   {"end_ns", S_INT, 0},
                                   {"wall_ns", S_INT, 0},
                                   {"ended", S_BOOL, 0},
                                   {"driver_version", S_STR_NULL, 0},
                                   {"cuda_driver_version", S_STR_NULL, 0},
                                   {"stop_reason", S_STR_NULL, 0},
                                   {"stop_detail", S_STR_NULL, 0},
                                   {"job", S_OBJ_NULL, s_job},
                                   {"engine", S_OBJ, s_engine},
                                   {"devices", S_ARR_OBJ, s_device},
                                   {0, 0, 0}};

static const sfield s_crash_frame[] = {
    {"module", S_STR_NULL, 0}, {"offset", S_STR, 0}, {"present", S_BOOL, 0}, {0, 0, 0}};

static const sfield s_crash_scope[] = {
    {"tid", S_INT, 0},      {"id", S_INT, 0}, {"parent", S_INT, 0}, {"depth", S_INT, 0}, {"name", S_STR, 0},
    {"begin_ns", S_INT, 0}, {0, 0, 0}};

static const sfield s_crash[] = {{"ts_ns", S_INT, 0},
                                 {"tid", S_INT, 0},
                                 {"signal", S_INT, 0},
                                 {"signal_name", S_STR, 0},
                                 {"code", S_INT, 0},
                                 {"code_name", S_STR, 0},
                                 {"address", S_STR, 0},
                                 {"sender_pid", S_INT, 0},
                                 {"action", S_STR, 0},
                                 {"stack_unavailable", S_BOOL, 0},
                                 {"stack_truncated", S_BOOL, 0},
                                 {"stack", S_ARR_OBJ, s_crash_frame},
                                 {"open_scopes", S_ARR_OBJ, s_crash_scope},
                                 {"open_scopes_lost", S_INT, 0},
                                 {0, 0, 0}};

static const sfield s_options[] = {{"top_kernels", S_INT, 0},
                                   {"top_scopes", S_INT, 0},
                                   {"top_stacks", S_INT, 0},
                                   {"max_allocations", S_INT, 0},
                                   {0, 0, 0}};

static const sfield s_device_summary[] = {{"device", S_INT, 0},
                                          {"name", S_STR_NULL, 0},
                                          {"busy_ns", S_INT, 0},
                                          {"busy_pct", S_NUM, 0},
                                          {"kernels", S_INT, 0},
                                          {"kernel_ns", S_INT, 0},
                                          {"copies", S_INT, 0},
                                          {"copy_bytes", S_INT, 0},
                                          {"copy_ns", S_INT, 0},
                                          {"memsets", S_INT, 0},
                                          {"memset_bytes", S_INT, 0},
                                          {"memset_ns", S_INT, 0},
                                          {"first_ns", S_INT, 0},
                                          {"last_ns", S_INT, 0},
                                          {"samples", S_INT, 0},
                                          {"util_samples", S_INT, 0},
                                          {"util_mean_pct", S_NUM, 0},
                                          {"util_peak_pct", S_INT, 0},
                                          {"mem_samples", S_INT, 0},
                                          {"mem_used_peak_bytes", S_INT, 0},
                                          {"mem_used_peak_ns", S_INT, 0},
                                          {"mem_total_bytes", S_INT, 0},
                                          {"proc_mem_samples", S_INT, 0},
                                          {"proc_mem_peak_bytes", S_INT, 0},
                                          {0, 0, 0}};

static const sfield s_summary[] = {{"kernels", S_INT, 0},
                                   {"kernel_ns", S_INT, 0},
                                   {"copies", S_INT, 0},
                                   {"copy_bytes", S_INT, 0},
                                   {"copy_ns", S_INT, 0},
                                   {"memsets", S_INT, 0},
                                   {"memset_bytes", S_INT, 0},
                                   {"memset_ns", S_INT, 0},
                                   {"syncs", S_INT, 0},
                                   {"sync_ns", S_INT, 0},
                                   {"scopes", S_INT, 0},
                                   {"nvtx_ranges", S_INT, 0},
                                   {"nvtx_marks", S_INT, 0},
                                   {"allocations", S_INT, 0},
                                   {"frees", S_INT, 0},
                                   {"failed_allocations", S_INT, 0},
                                   {"traced_ns", S_INT, 0},
                                   {"dropped_total", S_INT, 0},
                                   {"dropped", S_MAP_INT, 0},
                                   {"skipped_bytes", S_INT, 0},
                                   {"skipped_lines", S_INT, 0},
                                   {"skipped_chunks", S_INT, 0},
                                   {"devices", S_ARR_OBJ, s_device_summary},
                                   {0, 0, 0}};

static const sfield s_node[] = {{"index", S_INT, 0},
                                {"path", S_STR, 0},
                                {"name", S_STR_NULL, 0},
                                {"domain", S_STR_NULL, 0},
                                {"parent", S_INT_NULL, 0},
                                {"depth", S_INT, 0},
                                {"children", S_INT, 0},
                                {"count", S_INT, 0},
                                {"unended", S_INT, 0},
                                {"threads", S_INT, 0},
                                {"wall", S_OBJ, s_dist},
                                {"share_of_parent", S_NUM, 0},
                                {"gpu_ns", S_INT, 0},
                                {"gpu_self_ns", S_INT, 0},
                                {"gpu_ops", S_INT, 0},
                                {"gpu_self_ops", S_INT, 0},
                                {0, 0, 0}};

static const sfield s_tree[] = {{"instances", S_INT, 0},       {"roots", S_INT, 0},
                                {"attributed_ns", S_INT, 0},   {"attributed_ops", S_INT, 0},
                                {"unattributed_ns", S_INT, 0}, {"unattributed_ops", S_INT, 0},
                                {"nodes", S_ARR_OBJ, s_node},  {0, 0, 0}};

static const sfield s_scopes[] = {
    {"scopes", S_OBJ, s_tree}, {"nvtx", S_OBJ, s_tree}, {"nvtx_marks", S_INT, 0}, {0, 0, 0}};

static const sfield s_config[] = {{"grid", S_ARR_INT, 0},       {"block", S_ARR_INT, 0},    {"registers", S_INT, 0},
                                  {"static_smem", S_INT, 0},    {"dynamic_smem", S_INT, 0}, {"local_mem", S_INT, 0},
                                  {"occupancy", S_NUM_NULL, 0}, {"limiter", S_STR_NULL, 0}, {0, 0, 0}};

static const sfield s_hot_scope[] = {{"node", S_INT, 0},
                                     {"path", S_STR_NULL, 0},
                                     {"name", S_STR_NULL, 0},
                                     {"launches", S_INT, 0},
                                     {"gpu_ns", S_INT, 0},
                                     {"share", S_NUM, 0},
                                     {0, 0, 0}};

static const sfield s_hot_scopes[] = {{"nodes", S_ARR_OBJ, s_hot_scope}, {"unscoped_ns", S_INT, 0}, {0, 0, 0}};

static const sfield s_hot_stack[] = {
    {"stack", S_INT, 0}, {"launches", S_INT, 0}, {"gpu_ns", S_INT, 0}, {"share", S_NUM, 0}, {0, 0, 0}};

static const sfield s_hot_op[] = {{"name", S_STR_NULL, 0},
                                  {"module", S_STR_NULL, 0},
                                  {"backward_only", S_BOOL, 0},
                                  {"launches", S_INT, 0},
                                  {"gpu_ns", S_INT, 0},
                                  {"share", S_NUM, 0},
                                  {0, 0, 0}};

static const sfield s_hot_ops[] = {{"ops", S_ARR_OBJ, s_hot_op}, {"outside_ns", S_INT, 0}, {0, 0, 0}};

static const sfield s_kernel[] = {{"name", S_STR_NULL, 0},
                                  {"mangled", S_STR_NULL, 0},
                                  {"dur", S_OBJ, s_dist},
                                  {"share", S_NUM, 0},
                                  {"config", S_OBJ, s_config},
                                  {"config_launches", S_INT, 0},
                                  {"configs", S_INT, 0},
                                  {"devices", S_INT, 0},
                                  {"streams", S_INT, 0},
                                  {"scopes", S_OBJ, s_hot_scopes},
                                  {"nvtx", S_OBJ, s_hot_scopes},
                                  {"ops", S_OBJ, s_hot_ops},
                                  {"stacks", S_ARR_OBJ, s_hot_stack},
                                  {"distinct_stacks", S_INT, 0},
                                  {"no_stack_launches", S_INT, 0},
                                  {0, 0, 0}};

static const sfield s_hotspots[] = {{"distinct", S_INT, 0},           {"launches", S_INT, 0},
                                    {"total_ns", S_INT, 0},           {"stack_frames", S_BOOL, 0},
                                    {"kernels", S_ARR_OBJ, s_kernel}, {0, 0, 0}};

static const sfield s_op[] = {{"name", S_STR_NULL, 0},
                              {"backward_only", S_BOOL, 0},
                              {"calls", S_INT, 0},
                              {"backward_calls", S_INT, 0},
                              {"kernels", S_INT, 0},
                              {"work", S_INT, 0},
                              {"forward_ns", S_INT, 0},
                              {"backward_ns", S_INT, 0},
                              {"total_ns", S_INT, 0},
                              {"allocs", S_INT, 0},
                              {"alloc_bytes", S_INT, 0},
                              {"share", S_NUM, 0},
                              {0, 0, 0}};

static const sfield s_op_module[] = {{"module", S_STR_NULL, 0},
                                     {"kernels", S_INT, 0},
                                     {"work", S_INT, 0},
                                     {"forward_ns", S_INT, 0},
                                     {"backward_ns", S_INT, 0},
                                     {"total_ns", S_INT, 0},
                                     {"allocs", S_INT, 0},
                                     {"alloc_bytes", S_INT, 0},
                                     {"share", S_NUM, 0},
                                     {"ops", S_ARR_OBJ, s_op},
                                     {0, 0, 0}};

static const sfield s_ops[] = {{"op_ranges", S_INT, 0},
                               {"backward_ranges", S_INT, 0},
                               {"module_ranges", S_INT, 0},
                               {"work", S_INT, 0},
                               {"work_ns", S_INT, 0},
                               {"in_ops", S_INT, 0},
                               {"in_ops_ns", S_INT, 0},
                               {"forward_ns", S_INT, 0},
                               {"backward_ns", S_INT, 0},
                               {"outside", S_INT, 0},
                               {"outside_ns", S_INT, 0},
                               {"allocs", S_INT, 0},
                               {"alloc_bytes", S_INT, 0},
                               {"outside_allocs", S_INT, 0},
                               {"outside_alloc_bytes", S_INT, 0},
                               {"ops", S_ARR_OBJ, s_op},
                               {"modules", S_ARR_OBJ, s_op_module},
                               {0, 0, 0}};

static const sfield s_copy_row[] = {{"device", S_INT, 0},
                                    {"kind", S_STR, 0},
                                    {"count", S_INT, 0},
                                    {"bytes", S_INT, 0},
                                    {"ns", S_INT, 0},
                                    {"size", S_OBJ, s_dist},
                                    {"gbps", S_NUM, 0},
                                    {"pageable_count", S_INT, 0},
                                    {"pageable_bytes", S_INT, 0},
                                    {"peak_gbps", S_NUM, 0},
                                    {"peak_source", S_STR_NULL, 0},
                                    {"pcie_gen", S_INT, 0},
                                    {"pcie_width", S_INT, 0},
                                    {"peak_table", S_STR_NULL, 0},
                                    {"pct_of_peak", S_NUM, 0},
                                    {0, 0, 0}};

static const sfield s_copies[] = {{"count", S_INT, 0},
                                  {"bytes", S_INT, 0},
                                  {"ns", S_INT, 0},
                                  {"memsets", S_INT, 0},
                                  {"memset_bytes", S_INT, 0},
                                  {"memset_ns", S_INT, 0},
                                  {"rows", S_ARR_OBJ, s_copy_row},
                                  {0, 0, 0}};

static const sfield s_idle_row[] = {{"device", S_INT, 0},   {"stream", S_INT_NULL, 0},
                                    {"ops", S_INT, 0},      {"first_ns", S_INT, 0},
                                    {"last_ns", S_INT, 0},  {"busy_ns", S_INT, 0},
                                    {"idle_ns", S_INT, 0},  {"gaps", S_INT, 0},
                                    {"host_ns", S_INT, 0},  {"sync_ns", S_INT, 0},
                                    {"other_ns", S_INT, 0}, {"lead_ns", S_INT, 0},
                                    {"tail_ns", S_INT, 0},  {0, 0, 0}};

static const sfield s_launches[] = {
    {"kernels", S_INT, 0},   {"with_api", S_INT, 0},      {"latency", S_OBJ, s_dist},    {"queue", S_OBJ, s_dist},
    {"call", S_OBJ, s_dist}, {"short_kernels", S_INT, 0}, {"short_kernel_ns", S_INT, 0}, {0, 0, 0}};

static const sfield s_alloc[] = {{"ts_ns", S_INT, 0},     {"address", S_STR, 0}, {"bytes", S_INT, 0},
                                 {"kind", S_STR, 0},      {"tid", S_INT, 0},     {"scope", S_INT, 0},
                                 {"nvtx", S_STR_NULL, 0}, {"stack", S_INT, 0},   {0, 0, 0}};

static const sfield s_mem_row[] = {{"device", S_INT, 0},
                                   {"space", S_STR, 0},
                                   {"allocs", S_INT, 0},
                                   {"alloc_bytes", S_INT, 0},
                                   {"frees", S_INT, 0},
                                   {"free_bytes", S_INT, 0},
                                   {"peak_bytes", S_INT, 0},
                                   {"peak_ns", S_INT, 0},
                                   {"live_at_peak", S_INT, 0},
                                   {"live", S_ARR_OBJ, s_alloc},
                                   {"end_bytes", S_INT, 0},
                                   {"never_freed", S_INT, 0},
                                   {"never_freed_bytes", S_INT, 0},
                                   {"leaks", S_ARR_OBJ, s_alloc},
                                   {"unmatched_frees", S_INT, 0},
                                   {"unmatched_free_bytes", S_INT, 0},
                                   {"never_freed_why", S_STR, 0},
                                   {0, 0, 0}};

static const sfield s_memory[] = {{"recorded", S_BOOL, 0}, {"rows", S_ARR_OBJ, s_mem_row}, {0, 0, 0}};

static const sfield s_mem_layer[] = {{"layer", S_STR, 0},
                                     {"label", S_STR, 0},
                                     {"peak_bytes", S_INT, 0},
                                     {"peak_ns", S_INT, 0},
                                     {"at_peak_bytes", S_INT_NULL, 0},
                                     {0, 0, 0}};

static const sfield s_mem_gap[] = {{"gap", S_STR, 0},   {"upper", S_STR, 0}, {"lower", S_STR, 0},
                                   {"bytes", S_INT, 0}, {"why", S_STR, 0},   {0, 0, 0}};

static const sfield s_mem_point[] = {{"ts_ns", S_INT, 0},
                                     {"device_used", S_INT_NULL, 0},
                                     {"process_used", S_INT_NULL, 0},
                                     {"driver", S_INT_NULL, 0},
                                     {"reserved", S_INT_NULL, 0},
                                     {"active", S_INT_NULL, 0},
                                     {"allocated", S_INT_NULL, 0},
                                     {"inactive_split", S_INT_NULL, 0},
                                     {"largest_free", S_INT_NULL, 0},
                                     {0, 0, 0}};

static const sfield s_mem_timeline[] = {{"changes", S_INT, 0}, {"points", S_ARR_OBJ, s_mem_point}, {0, 0, 0}};

static const sfield s_mem_layers_dev[] = {{"device", S_INT, 0},
                                          {"total_bytes", S_INT_NULL, 0},
                                          {"framework", S_STR_NULL, 0},
                                          {"framework_source", S_STR_NULL, 0},
                                          {"driver_frees", S_BOOL, 0},
                                          {"layers", S_ARR_OBJ, s_mem_layer},
                                          {"at_peak_layer", S_STR, 0},
                                          {"at_peak_ns", S_INT, 0},
                                          {"gaps", S_ARR_OBJ, s_mem_gap},
                                          {"timeline", S_OBJ, s_mem_timeline},
                                          {0, 0, 0}};

static const sfield s_mem_peak[] = {{"kind", S_STR, 0},
                                    {"layer", S_STR, 0},
                                    {"device", S_INT, 0},
                                    {"stream", S_INT_NULL, 0},
                                    {"name", S_STR_NULL, 0},
                                    {"instances", S_INT, 0},
                                    {"peak_bytes", S_INT, 0},
                                    {"peak_ns", S_INT, 0},
                                    {"growth_bytes", S_INT, 0},
                                    {"max_growth_bytes", S_INT, 0},
                                    {"allocs", S_INT, 0},
                                    {"alloc_bytes", S_INT, 0},
                                    {0, 0, 0}};

static const sfield s_mem_peaks[] = {{"rows", S_ARR_OBJ, s_mem_peak}, {"names_left_out", S_INT, 0}, {0, 0, 0}};

static const sfield s_leak_stack[] = {
    {"stack", S_INT, 0}, {"count", S_INT, 0}, {"bytes", S_INT, 0}, {"frames", S_ARR_STR_NULL, 0}, {0, 0, 0}};

static const sfield s_leak_grew[] = {
    {"count", S_INT, 0}, {"bytes", S_INT, 0}, {"stacks", S_ARR_OBJ, s_leak_stack}, {0, 0, 0}};

static const sfield s_leak[] = {{"scope", S_STR_NULL, 0},
                                {"kind", S_STR, 0},
                                {"device", S_INT, 0},
                                {"layer", S_STR, 0},
                                {"repetitions", S_INT, 0},
                                {"warmup", S_INT, 0},
                                {"detected", S_BOOL, 0},
                                {"severity", S_STR, 0},
                                {"memory_increase_mb", S_NUM, 0},
                                {"time_window_seconds", S_NUM, 0},
                                {"slope_bytes_per_step", S_NUM, 0},
                                {"r_squared", S_NUM, 0},
                                {"p_value", S_NUM, 0},
                                {"suggestions", S_ARR_STR, 0},
                                {"grew", S_OBJ, s_leak_grew},
                                {0, 0, 0}};

static const sfield s_leaks[] = {
    {"min_steps", S_INT, 0}, {"detected", S_INT, 0}, {"rows", S_ARR_OBJ, s_leak}, {0, 0, 0}};

static const sfield s_section[] = {{"status", S_STR, 0}, {"engine", S_STR_NULL, 0}, {"rows", S_INT, 0}, {0, 0, 0}};

static const sfield s_stall[] = {{"reason", S_STR, 0}, {"samples", S_INT, 0}, {0, 0, 0}};
static const sfield s_stall_kernel[] = {{"name", S_STR, 0},        {"samples", S_INT, 0},       {"stalled", S_INT, 0},
                                        {"gpu_time_ns", S_INT, 0}, {"top", S_ARR_OBJ, s_stall}, {0, 0, 0}};
static const sfield s_stall_line[] = {{"function", S_STR, 0},  {"file", S_STR, 0},           {"line", S_INT, 0},
                                      {"code", S_STR_NULL, 0}, {"code_from", S_STR_NULL, 0}, {"samples", S_INT, 0},
                                      {"stalled", S_INT, 0},   {"top", S_ARR_OBJ, s_stall},  {0, 0, 0}};
static const sfield s_stall_scope[] = {
    {"scope", S_STR_NULL, 0}, {"samples", S_INT, 0}, {"stalled", S_INT, 0}, {"top", S_ARR_OBJ, s_stall}, {0, 0, 0}};
static const sfield s_stalls[] = {{"status", S_STR, 0},
                                  {"engine", S_STR_NULL, 0},
                                  {"rows", S_INT, 0},
                                  {"samples", S_INT, 0},
                                  {"stalled", S_INT, 0},
                                  {"reasons", S_ARR_OBJ, s_stall},
                                  {"kernels", S_ARR_OBJ, s_stall_kernel},
                                  {"lines", S_ARR_OBJ, s_stall_line},
                                  {"scopes", S_ARR_OBJ, s_stall_scope},
                                  {"unattributed", S_INT, 0},
                                  {"no_line", S_INT, 0},
                                  {0, 0, 0}};

#define SASS_COUNTS                                                                                                    \
    {"inst_executed", S_INT, 0}, {"thread_inst_executed", S_INT, 0}, {"sectors", S_INT, 0},                            \
        {"sectors_ideal", S_INT, 0}, {"branch_targets", S_INT, 0}, {"divergent_targets", S_INT, 0},                    \
        {"valid", S_INT, 0}, {"coalescing", S_NUM_NULL, 0},                                                            \
    {                                                                                                                  \
        "active", S_NUM_NULL, 0                                                                                        \
    }
static const sfield s_sass_kernel[] = {{"name", S_STR, 0}, {"launches", S_INT, 0}, SASS_COUNTS, {0, 0, 0}};
static const sfield s_sass_line[] = {{"function", S_STR, 0},
                                     {"file", S_STR_NULL, 0},
                                     {"line", S_INT_NULL, 0},
                                     {"code", S_STR_NULL, 0},
                                     {"code_from", S_STR_NULL, 0},
                                     {"pc", S_INT_NULL, 0},
                                     SASS_COUNTS,
                                     {0, 0, 0}};
static const sfield s_sass_finding[] = {{"kind", S_STR, 0},
                                        {"function", S_STR, 0},
                                        {"file", S_STR_NULL, 0},
                                        {"line", S_INT_NULL, 0},
                                        {"code", S_STR_NULL, 0},
                                        {"code_from", S_STR_NULL, 0},
                                        {"pc", S_INT_NULL, 0},
                                        {"cost", S_INT, 0},
                                        {"coalescing", S_NUM_NULL, 0},
                                        {"active", S_NUM_NULL, 0},
                                        {0, 0, 0}};
static const sfield s_sass[] = {{"status", S_STR, 0},
                                {"engine", S_STR_NULL, 0},
                                {"rows", S_INT, 0},
                                {"kernels", S_ARR_OBJ, s_sass_kernel},
                                {"lines", S_ARR_OBJ, s_sass_line},
                                {"findings", S_ARR_OBJ, s_sass_finding},
                                {0, 0, 0}};

static const sfield s_counters[] = {
    {"stalls", S_OBJ, s_stalls}, {"sass", S_OBJ, s_sass}, {"hw", S_OBJ, s_section}, {0, 0, 0}};

static const sfield s_trigger[] = {{"ts_ns", S_INT, 0},
                                   {"tid", S_INT, 0},
                                   {"kind", S_STR_NULL, 0},
                                   {"detail", S_STR_NULL, 0},
                                   {"outcome", S_STR, 0},
                                   {"dump", S_STR_NULL, 0},
                                   {0, 0, 0}};

static const sfield s_trace_window[] = {
    {"index", S_INT, 0},       {"begin_ns", S_INT, 0},    {"end_ns", S_INT, 0},   {"dur_ns", S_INT, 0},
    {"reason", S_STR_NULL, 0}, {"detail", S_STR_NULL, 0}, {"unended", S_BOOL, 0}, {0, 0, 0}};

static const sfield s_last_event[] = {
    {"ts_ns", S_INT, 0}, {"end_ns", S_INT, 0},      {"what", S_STR, 0}, {"name", S_STR_NULL, 0},
    {"bytes", S_INT, 0}, {"device", S_INT_NULL, 0}, {"tid", S_INT, 0},  {0, 0, 0}};

static const sfield s_failed_alloc[] = {{"ts_ns", S_INT, 0}, {"bytes", S_INT, 0}, {0, 0, 0}};

static const sfield s_incident[] = {{"kind", S_STR, 0},
                                    {"ts_ns", S_INT, 0},
                                    {"tid", S_INT, 0},
                                    {"device", S_INT_NULL, 0},
                                    {"last", S_ARR_OBJ, s_last_event},
                                    {"failed_allocation", S_OBJ_NULL, s_failed_alloc},
                                    {"live_count", S_INT, 0},
                                    {"live_bytes", S_INT, 0},
                                    {"largest", S_ARR_OBJ, s_alloc},
                                    {0, 0, 0}};

static const sfield s_pm[] = {{"device", S_INT, 0},  {"metric", S_STR, 0}, {"unit", S_STR, 0}, {"samples", S_INT, 0},
                              {"time_ns", S_INT, 0}, {"mean", S_NUM, 0},   {"max", S_NUM, 0},  {0, 0, 0}};

static const sfield s_nccl_device[] = {
    {"device", S_INT, 0},      {"comm_ns", S_INT, 0}, {"compute_ns", S_INT, 0}, {"overlap_ns", S_INT, 0},
    {"overlap_pct", S_NUM, 0}, {"span_ns", S_INT, 0}, {"busy_ns", S_INT, 0},    {0, 0, 0}};
static const sfield s_nccl_row[] = {{"device", S_INT, 0},
                                    {"collective", S_STR, 0},
                                    {"algorithm", S_STR, 0},
                                    {"protocol", S_STR, 0},
                                    {"algorithm_specialised", S_BOOL, 0},
                                    {"protocol_specialised", S_BOOL, 0},
                                    {"kernels", S_INT, 0},
                                    {"total_ns", S_INT, 0},
                                    {"max_ns", S_INT, 0},
                                    {"busy_pct", S_NUM, 0},
                                    {"bytes", S_INT_NULL, 0},
                                    {"bytes_known", S_INT, 0},
                                    {"algbw_gbps", S_NUM_NULL, 0},
                                    {"busbw_gbps", S_NUM_NULL, 0},
                                    {0, 0, 0}};
static const sfield s_critpath_item[] = {{"kind", S_STR, 0},  {"name", S_STR_NULL, 0}, {"ns", S_INT, 0},
                                         {"share", S_NUM, 0}, {"pieces", S_INT, 0},    {0, 0, 0}};
static const sfield s_critpath[] = {{"step", S_STR, 0},         {"step_kind", S_STR, 0},
                                    {"steps", S_INT, 0},        {"occurrence", S_INT, 0},
                                    {"begin_ns", S_INT, 0},     {"end_ns", S_INT, 0},
                                    {"path_ns", S_INT, 0},      {"items", S_ARR_OBJ, s_critpath_item},
                                    {"work_on_path", S_INT, 0}, {0, 0, 0}};
static const sfield s_nccl[] = {{"kernels", S_INT, 0},
                                {"recorded_collectives", S_INT, 0},
                                {"kernels_with_bytes", S_INT, 0},
                                {"bytes_note", S_STR, 0},
                                {"devices", S_ARR_OBJ, s_nccl_device},
                                {"collectives", S_ARR_OBJ, s_nccl_row},
                                {0, 0, 0}};

static const sfield s_report[] = {{"schema", S_STR, 0},
                                  {"schema_version", S_INT, 0},
                                  {"session", S_OBJ, s_session},
                                  {"crash", S_OBJ_NULL, s_crash},
                                  {"options", S_OBJ, s_options},
                                  {"summary", S_OBJ, s_summary},
                                  {"scopes", S_OBJ, s_scopes},
                                  {"ops", S_OBJ, s_ops},
                                  {"hotspots", S_OBJ, s_hotspots},
                                  {"copies", S_OBJ, s_copies},
                                  {"idle", S_ARR_OBJ, s_idle_row},
                                  {"launches", S_OBJ, s_launches},
                                  {"memory", S_OBJ, s_memory},
                                  {"counters", S_OBJ, s_counters},
                                  {"triggers", S_ARR_OBJ, s_trigger},
                                  {"trace_windows", S_ARR_OBJ, s_trace_window},
                                  {"incident", S_OBJ_NULL, s_incident},
                                  {"memory_layers", S_ARR_OBJ, s_mem_layers_dev},
                                  {"memory_peaks", S_OBJ, s_mem_peaks},
                                  {"leaks", S_OBJ, s_leaks},
                                  {"pm_sampling", S_ARR_OBJ, s_pm},
                                  {"nccl", S_OBJ_OPT, s_nccl},
                                  {"critical_path", S_OBJ_OPT, s_critpath},
                                  {0, 0, 0}};

/* Checks v against t; on a mismatch writes the member's path into why and
 * returns -1. */
static int schema_check_obj(json_t *v, const sfield *t, const char *at, char *why, size_t len);

static int schema_check_value(json_t *v, const sfield *f, const char *at, char *why, size_t len)
{
    bool ok;
    switch (f->type) {
    case S_INT: ok = json_is_integer(v); break;
    case S_NUM: ok = json_is_number(v); break;
    case S_STR: ok = json_is_string(v); break;
    case S_STR_NULL: ok = json_is_string(v) || json_is_null(v); break;
    case S_INT_NULL: ok = json_is_integer(v) || json_is_null(v); break;
    case S_NUM_NULL: ok = json_is_number(v) || json_is_null(v); break;
    case S_BOOL: ok = json_is_boolean(v); break;
    case S_OBJ_NULL:
        if (json_is_null(v))
            return 0;
        /* fall through */
    case S_OBJ_OPT:
    case S_OBJ:
        if (json_is_object(v))
            return schema_check_obj(v, f->sub, at, why, len);
        snprintf(why, len, "%s: not an object", at);
        return -1;
    case S_ARR_STR_NULL:
        if (json_is_null(v))
            return 0;
        /* fall through */
    case S_ARR_STR:
    case S_ARR_OBJ:
    case S_ARR_INT: {
        if (!json_is_array(v)) {
            snprintf(why, len, "%s: not an array", at);
            return -1;
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            char sub[512];
            snprintf(sub, sizeof sub, "%s[%zu]", at, i);
            bool fits = f->type == S_ARR_INT   ? json_is_integer(e)
                        : f->type == S_ARR_OBJ ? json_is_object(e)
                                               : json_is_string(e);
            if (!fits) {
                snprintf(why, len, "%s: wrong type", sub);
                return -1;
            }
            if (f->type == S_ARR_OBJ && schema_check_obj(e, f->sub, sub, why, len) != 0)
                return -1;
        }
        return 0;
    }
    case S_MAP_INT: {
        if (!json_is_object(v)) {
            snprintf(why, len, "%s: not an object", at);
            return -1;
        }
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) if (!json_is_integer(e))
        {
            snprintf(why, len, "%s.%s: not an integer", at, k);
            return -1;
        }
        return 0;
    }
    default: ok = false;
    }
    if (!ok)
        snprintf(why, len, "%s: wrong type", at);
    return ok ? 0 : -1;
}

static int schema_check_obj(json_t *v, const sfield *t, const char *at, char *why, size_t len)
{
    size_t n = 0;
    for (const sfield *f = t; f->key; f++, n++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s.%s", at, f->key);
        json_t *m = json_object_get(v, f->key);
        if (!m && f->type == S_OBJ_OPT) {
            n--; /* absent, and not counted among the members present */
            continue;
        }
        if (!m) {
            snprintf(why, len, "%s: missing", sub);
            return -1;
        }
        if (schema_check_value(m, f, sub, why, len) != 0)
            return -1;
    }
    if (json_object_size(v) != n) {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e)
        {
            bool known = false;
            for (const sfield *f = t; f->key; f++)
                known = known || !strcmp(f->key, k);
            if (!known) {
                snprintf(why, len, "%s.%s: not in the schema", at, k);
                return -1;
            }
        }
    }
    return 0;
}

/* 0 when doc is a valid report of schema_version 1; -1 with why. */
static inline int report_schema_check(json_t *doc, char *why, size_t len)
{
    if (!json_is_object(doc)) {
        snprintf(why, len, "the document is not an object");
        return -1;
    }
    return schema_check_obj(doc, s_report, "$", why, len);
}

#endif /* GPUFL_TESTS_REPORT_SCHEMA_H */
