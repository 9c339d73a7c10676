/*
 * Names of event types, channels, drop reasons, log levels and crash
 * fields, as written in the NDJSON logs and documented in docs/FORMAT.md
 * (the enums the reports print too are in names.c).
 */
#include "core/event.h"

#include <signal.h>

#define NAME_OF(table, i) ((unsigned)(i) < sizeof(table) / sizeof(table[0]) && table[i] ? table[i] : "unknown")

const char *gpufl__event_type_name(uint8_t type)
{
    static const char *const names[GFL_EV_TYPE_COUNT] = {
        [GFL_EV_NONE] = "none",
        [GFL_EV_SCOPE_BEGIN] = "scope_begin",
        [GFL_EV_SCOPE_END] = "scope_end",
        [GFL_EV_SYSTEM_START] = "system_start",
        [GFL_EV_SYSTEM_STOP] = "system_stop",
        [GFL_EV_HOST_METRICS] = "host_metrics",
        [GFL_EV_DEVICE_METRICS] = "device_metrics",
        [GFL_EV_KERNEL] = "kernel",
        [GFL_EV_MEMCPY] = "memcpy",
        [GFL_EV_MEMSET] = "memset",
        [GFL_EV_SYNC] = "sync",
        [GFL_EV_MEM_ALLOC] = "mem_alloc",
        [GFL_EV_MEM_FREE] = "mem_free",
        [GFL_EV_DROPPED] = "dropped",
        [GFL_EV_LOG] = "log",
        [GFL_EV_DEVICE_INFO] = "device_info",
        [GFL_EV_NVTX_RANGE] = "nvtx_range",
        [GFL_EV_NVTX_MARK] = "nvtx_mark",
        [GFL_EV_GRAPH_LAUNCH] = "graph_launch",
        [GFL_EV_STACK] = "stack",
        [GFL_EV_CRASH] = "crash",
        [GFL_EV_CRASH_STACK] = "crash_stack",
        [GFL_EV_CRASH_SCOPE] = "crash_scope",
        [GFL_EV_ENGINE] = "engine",
        [GFL_EV_TRIGGER] = "trigger",
        [GFL_EV_ALLOCATOR] = "allocator",
        [GFL_EV_PC_SAMPLE] = "pc_sample",
        [GFL_EV_RANGE_METRIC] = "range_metric",
        [GFL_EV_SASS_METRIC] = "sass_metric",
        [GFL_EV_PM_SAMPLE] = "pm_sample",
        [GFL_EV_CLOCK] = "clock",
        [GFL_EV_NCCL_COLL] = "nccl_coll",
        [GFL_EV_TRACE_WINDOW] = "trace_window",
    };
    return NAME_OF(names, type);
}

const char *gpufl__channel_name(uint8_t channel)
{
    static const char *const names[GFL_CHANNEL_COUNT] = {"device", "scope", "system"};
    return NAME_OF(names, channel);
}

const char *gpufl__log_level_name(uint8_t level)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    return NAME_OF(names, level);
}

const char *gpufl__crash_action_name(uint8_t action)
{
    static const char *const names[GFL_CRASH_ACTION_COUNT] = {"default", "handler", "ignored"};
    return NAME_OF(names, action);
}

const char *gpufl__trigger_outcome_name(uint8_t outcome)
{
    static const char *const names[GFL_TRIGGER_OUTCOME_COUNT] = {"dumped", "storm", "no_window"};
    return NAME_OF(names, outcome);
}

const char *gpufl__signal_name(int32_t signal)
{
    switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
    }
}

/* The si_code values of <signal.h> (Linux): per signal for faults (> 0),
 * shared for signals a process sent (<= 0) and the kernel's own. */
const char *gpufl__signal_code_name(int32_t signal, int32_t code)
{
    static const char *const segv[] = {NULL, "SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR"};
    static const char *const bus[] = {NULL, "BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"};
    static const char *const fpe[] = {NULL,         "FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF",
                                      "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"};
    static const char *const ill[] = {NULL,         "ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP",
                                      "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"};
    static const char *const sent[] = {"SI_USER",    "SI_QUEUE", "SI_TIMER", "SI_MESGQ",
                                       "SI_ASYNCIO", "SI_SIGIO", "SI_TKILL"};
#define CODE_OF(table) (code < (int32_t)(sizeof table / sizeof table[0]) ? table[code] : NULL)
    if (code == 0x80)
        return "SI_KERNEL";
    if (code <= 0)
        return -code < (int32_t)(sizeof sent / sizeof sent[0]) ? sent[-code] : NULL;
    switch (signal) {
    case SIGSEGV: return CODE_OF(segv);
    case SIGBUS: return CODE_OF(bus);
    case SIGFPE: return CODE_OF(fpe);
    case SIGILL: return CODE_OF(ill);
    default: return NULL;
    }
#undef CODE_OF
}

/* NVML "clocks event reasons", in bit order. */
const char *gpufl__throttle_reason_name(unsigned bit)
{
    static const char *const names[GFL_THROTTLE_REASON_COUNT] = {
        "gpu_idle",   "app_clocks_setting", "sw_power_cap",   "hw_slowdown",    "sync_boost",
        "sw_thermal", "hw_thermal",         "hw_power_brake", "display_clocks",
    };
    return bit < GFL_THROTTLE_REASON_COUNT ? names[bit] : "unknown";
}
