/*
 * Names of event types, channels, drop reasons and enum fields, as written
 * in the NDJSON logs and documented in docs/FORMAT.md.
 */
#include "core/event.h"

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
    };
    return NAME_OF(names, type);
}

const char *gpufl__channel_name(uint8_t channel)
{
    static const char *const names[GFL_CHANNEL_COUNT] = {"device", "scope", "system"};
    return NAME_OF(names, channel);
}

const char *gpufl__drop_reason_name(uint8_t reason)
{
    static const char *const names[GFL_DROP_REASON_COUNT] = {
        "ring_full", "disk_limit", "stale", "scope_depth", "intern_full", "bad_event", "cupti",
        "out_of_session",
    };
    return NAME_OF(names, reason);
}

const char *gpufl__copy_kind_name(uint8_t kind)
{
    static const char *const names[GFL_COPY_KIND_COUNT] = {"unknown", "HtoD", "DtoH",
                                                           "DtoD",    "HtoH", "PtoP"};
    return NAME_OF(names, kind);
}

const char *gpufl__mem_kind_name(uint8_t kind)
{
    static const char *const names[GFL_MEM_KIND_COUNT] = {
        "unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static",
    };
    return NAME_OF(names, kind);
}

const char *gpufl__sync_kind_name(uint8_t kind)
{
    static const char *const names[GFL_SYNC_KIND_COUNT] = {"unknown", "event", "stream_wait_event",
                                                           "stream", "context"};
    return NAME_OF(names, kind);
}

const char *gpufl__limiter_name(uint8_t limiter)
{
    static const char *const names[GFL_LIMIT_COUNT] = {"unknown", "warps", "registers",
                                                       "shared_memory", "blocks"};
    return NAME_OF(names, limiter);
}

const char *gpufl__log_level_name(uint8_t level)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    return NAME_OF(names, level);
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
