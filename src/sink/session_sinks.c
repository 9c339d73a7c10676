/*
 * Opening a live session's sinks by log_format (see session_sinks.h).
 */
#include "sink/session_sinks.h"

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

int gpufl__session_sinks_open(gpufl__collector_config *cfg, const gpufl__session_info *info, gpufl__disk_budget *budget,
                              char *err, size_t err_len)
{
    const gpufl_options *o = &info->config->o;
    gpufl__disk_budget_init(budget, info->dir, o->session_max_bytes, o->min_free_bytes);
    gpufl__disk_budget_keep_reserve(budget);
    cfg->nsinks = 0;
    int rc;
    if (o->log_format != GPUFL_LOG_GFLT) {
        if ((rc = gpufl__ndjson_sink_open(&cfg->sinks[0], info, budget, err, err_len)) != 0) {
            gpufl__disk_budget_release(budget);
            return rc;
        }
        cfg->nsinks = 1;
    }
    if (o->log_format != GPUFL_LOG_NDJSON) {
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
