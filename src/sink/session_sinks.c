/*
 * Opening a live session's sinks by log_format (see session_sinks.h).
 */
#include "sink/session_sinks.h"

#include <stdbool.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "sink/gflt_sink.h"
#include "sink/ndjson_sink.h"

void gpufl__session_meta_of(const gpufl__session_info *info, gpufl__session_meta *out)
{
    memset(out, 0, sizeof *out);
    out->session_id = info->id;
    out->app_name = info->app_name;
    out->host = info->host;
    out->gpufl_version = GPUFL_VERSION_STRING;
    out->pid = info->pid;
    out->start_ns = info->start_ns;
    out->start_wall_ns = info->start_wall_ns;
    out->format_version = GFL_FORMAT_VERSION;
    out->stop_detail = "";
}

/* The NDJSON channels each log_format writes (none for gflt and none);
 * compact leaves the device channel to trace.gflt, because as NDJSON it
 * is 630-700 bytes a kernel and a busy GPU runs thousands a second, while
 * what log shippers use (scopes, markers, metric samples, crashes) is a
 * few lines a second. */
static unsigned ndjson_channels(gpufl_log_format f)
{
    switch (f) {
    case GPUFL_LOG_NDJSON:
    case GPUFL_LOG_BOTH: return GFL_NDJSON_ALL_CHANNELS;
    case GPUFL_LOG_COMPACT: return GFL_NDJSON_CHANNEL(GFL_CHANNEL_SCOPE) | GFL_NDJSON_CHANNEL(GFL_CHANNEL_SYSTEM);
    default: return 0;
    }
}

static bool writes_gflt(gpufl_log_format f)
{
    return f == GPUFL_LOG_GFLT || f == GPUFL_LOG_BOTH || f == GPUFL_LOG_COMPACT;
}

int gpufl__session_sinks_open(gpufl__collector_config *cfg, const gpufl__session_info *info, gpufl__disk_budget *budget,
                              char *err, size_t err_len)
{
    const gpufl_options *o = &info->config->o;
    gpufl__disk_budget_init(budget, info->dir, o->session_max_bytes, o->min_free_bytes);
    cfg->nsinks = 0;
    unsigned channels = ndjson_channels(o->log_format);
    bool gflt = writes_gflt(o->log_format);
    /* log_format none: no sink. The reserve exists for the sinks' closing
     * records and only their close gives it back, so none keeps none. */
    if (!channels && !gflt)
        return 0;
    gpufl__disk_budget_keep_reserve(budget);
    int rc;
    if (channels) {
        if ((rc = gpufl__ndjson_sink_open(&cfg->sinks[0], info, budget, channels, err, err_len)) != 0) {
            gpufl__disk_budget_release(budget);
            return rc;
        }
        cfg->nsinks = 1;
    }
    if (gflt) {
        if ((rc = gpufl__gflt_sink_open(&cfg->sinks[cfg->nsinks], info, budget, err, err_len)) != 0) {
            gpufl__session_end end = {.end_ns = info->start_ns, .end_wall_ns = info->start_wall_ns};
            for (size_t i = 0; i < cfg->nsinks; i++)
                cfg->sinks[i].close(cfg->sinks[i].self, &end);
            cfg->nsinks = 0;
            gpufl__disk_budget_release(budget);
            return rc;
        }
        cfg->nsinks++;
    }
    return 0;
}
