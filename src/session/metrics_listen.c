/*
 * The metrics endpoint of a recorded program (metrics_listen.h).
 */
#include "session/metrics_listen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytebuf.h"
#include "core/log.h"
#include "gpufl/gpufl.h"
#include "session/metrics_http.h"
#include "session/metrics_recorder.h"
#include "session/metrics_text.h"

struct gpufl__metrics_listen {
    gpufl__metrics_server *server;
    gpufl__metrics_agg *agg; /* the collector's */
    const gpufl__device_list *devices;
    char host[256];
    /* sampler thread */
    gpufl__live_sample reading; /* gpu[i]: devices->devices[i]'s */
    gfl_device_metrics_payload held[GFL_MAX_DEVICES];
    gpufl__bytebuf dev_text, dev_om;
    bool dev_failed; /* a render ran out of memory: said once */
    /* collector thread */
    gpufl__bytebuf rec_text, rec_om;
    bool rec_failed;
    bool rec_published;
    uint64_t rec_fingerprint; /* of the figures last rendered */
};

int gpufl__metrics_listen_start(const char *addr, const gpufl__device_list *devices, const char *hostname,
                                gpufl__metrics_listen **out, char *err, size_t err_len)
{
    *out = NULL;
    gpufl__metrics_listen *m = calloc(1, sizeof *m);
    if (m)
        m->agg = gpufl__metrics_agg_new();
    if (!m || !m->agg) {
        free(m);
        snprintf(err, err_len, "out of memory for the metrics endpoint on %s", addr);
        return GPUFL_ENOMEM;
    }
    int rc = gpufl__metrics_server_start(addr, false, &m->server, err, err_len);
    if (rc != 0) {
        free(m->agg);
        free(m);
        return rc;
    }
    m->devices = devices;
    snprintf(m->host, sizeof m->host, "%s", hostname);
    *out = m;
    return 0;
}

const char *gpufl__metrics_listen_address(const gpufl__metrics_listen *m)
{
    return gpufl__metrics_server_address(m->server);
}

/* Renders and publishes one part in both formats; out of memory is
 * logged once a part (the last text stays served). */
static void publish(gpufl__metrics_listen *m, unsigned part, int rc, gpufl__bytebuf *text, gpufl__bytebuf *om,
                    bool *failed)
{
    if (rc == 0)
        rc = part == GPUFL__METRICS_PART_DEVICES
                 ? gpufl__metrics_server_publish(m->server, text->p, text->len, om->p, om->len)
                 : gpufl__metrics_server_publish_part(m->server, part, text->p, text->len, om->p, om->len);
    if (rc != 0 && !*failed) {
        *failed = true;
        gpufl__log(GFL_LOG_WARN, "metrics endpoint: out of memory rendering the metrics; serving the last ones");
    }
}

static void on_reading(void *ctx, const gfl_event *events, size_t n)
{
    gpufl__metrics_listen *m = ctx;
    uint32_t count = m->devices ? m->devices->count : 0;
    if (count > GFL_MAX_DEVICES)
        count = GFL_MAX_DEVICES;
    gpufl__live_sample *s = &m->reading;
    memset(s->gpu, 0, sizeof s->gpu);
    for (size_t e = 0; e < n; e++) {
        if (events[e].h.type != GFL_EV_DEVICE_METRICS)
            continue;
        for (uint32_t i = 0; i < count; i++)
            if (m->devices->devices[i].index == events[e].h.device)
                s->gpu[i] = events[e].u.dev;
    }
    /* NVML reads energy and PCIe less often than this: keep their last */
    gpufl__metrics_hold(m->held, s, count);
    gpufl__device_list none = {0};
    const gpufl__device_list *d = m->devices ? m->devices : &none;
    m->dev_text.len = m->dev_om.len = 0;
    int rc = gpufl__metrics_render_devices(d, s->gpu, m->host, false, &m->dev_text);
    rc = rc ? rc : gpufl__metrics_render_devices(d, s->gpu, m->host, true, &m->dev_om);
    publish(m, GPUFL__METRICS_PART_DEVICES, rc, &m->dev_text, &m->dev_om, &m->dev_failed);
}

/* Everything the figures are made of moves one of these: events (the
 * aggregates change only with them), losses, bytes written. */
static uint64_t fingerprint(const gpufl__metrics_view *v)
{
    uint64_t f = gpufl__stats_dropped_total(v->stats);
    for (unsigned t = 0; t < GFL_EV_TYPE_COUNT; t++)
        f += v->stats->events[t];
    for (unsigned i = 0; i < v->sinks->nfiles; i++)
        f += v->sinks->files[i].bytes;
    return f;
}

static void on_figures(void *ctx, const gpufl__metrics_view *v)
{
    gpufl__metrics_listen *m = ctx;
    /* a quiet session is not rendered again (256 scope names are a few
     * hundred KiB of text) */
    uint64_t f = fingerprint(v);
    if (m->rec_published && f == m->rec_fingerprint)
        return;
    m->rec_published = true;
    m->rec_fingerprint = f;
    m->rec_text.len = m->rec_om.len = 0;
    int rc = gpufl__metrics_render_recorder(v, false, &m->rec_text);
    rc = rc ? rc : gpufl__metrics_render_recorder(v, true, &m->rec_om);
    publish(m, GPUFL__METRICS_PART_RECORDER, rc, &m->rec_text, &m->rec_om, &m->rec_failed);
}

void gpufl__metrics_listen_collector(gpufl__metrics_listen *m, gpufl__collector_config *cfg)
{
    cfg->metrics = m->agg;
    cfg->publish = on_figures;
    cfg->publish_ctx = m;
}

gpufl__sampler_reader gpufl__metrics_listen_reader(gpufl__metrics_listen *m, bool record)
{
    return (gpufl__sampler_reader){.reading = on_reading, .ctx = m, .record = record};
}

void gpufl__metrics_listen_stop(gpufl__metrics_listen *m)
{
    if (!m)
        return;
    gpufl__metrics_server_stop(m->server);
    gpufl__bytebuf_free(&m->dev_text);
    gpufl__bytebuf_free(&m->dev_om);
    gpufl__bytebuf_free(&m->rec_text);
    gpufl__bytebuf_free(&m->rec_om);
    free(m->agg);
    free(m);
}
