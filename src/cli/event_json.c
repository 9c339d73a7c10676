/*
 * An event as the JSON object of its NDJSON line (see event_json.h). Each
 * value is what jansson would read back from the line: a fixed-point
 * number with no fraction is an integer ("12", not 12.0), strings that are
 * not UTF-8 carry U+FFFD where the writer puts it.
 */
#include "cli/event_json.h"

#include <stdbool.h>

#include "core/utf8.h"
#include "format/ndjson_fields.h"

static json_t *fixed(uint64_t v, uint64_t scale)
{
    if (v % scale == 0)
        return json_integer((json_int_t)(v / scale));
    return json_real((double)v / (double)scale);
}

static json_t *text(const gpufl__string_lookup *names, uint32_t id)
{
    uint32_t len;
    return gpufl__json_text(gpufl__lookup(names, id, &len));
}

/* "major.minor"; an unknown minor (-1) as 0 */
static json_t *capability(const int8_t *cc) { return json_sprintf("%d.%d", cc[0], cc[1] >= 0 ? cc[1] : 0); }

/* 13000 -> "13.0" */
static json_t *cuda_version(int32_t v) { return json_sprintf("%u.%u", (unsigned)v / 1000, (unsigned)v % 1000 / 10); }

static json_t *throttle_names(uint64_t mask)
{
    json_t *a = json_array();
    for (unsigned b = 0; a && b < GFL_THROTTLE_REASON_COUNT; b++)
        if (mask & (1ull << b))
            json_array_append_new(a, json_string(gpufl__throttle_reason_name(b)));
    return a;
}

/* The value of each kind these lines have; a kind they do not have stays
 * undefined, so a table row of a new kind in them fails to compile here. */
#define JV_U(v, a) json_integer((json_int_t)(v))
#define JV_I(v, a) json_integer((json_int_t)(v))
#define JV_STR(v, a) text(names, (v))
#define JV_FIX2(v, a) fixed((v), 100)
#define JV_CC(v, a) capability(&(v))
#define JV_CUDA(v, a) cuda_version(v)
#define JV_THROTTLE(v, a) throttle_names(v)

#define JSON_FIELD(key, member, kind, arg, when)                                                                       \
    if (GFL_NDJ_IF_##when(ev, ev->member, arg))                                                                        \
        json_object_set_new(o, #key, JV_##kind(ev->member, arg));

json_t *gpufl__event_json(const gfl_event *ev, const gpufl__string_lookup *names)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    switch (ev->h.type) {
    case GFL_EV_DEVICE_INFO: GFL_NDJSON_DEVICE_INFO(JSON_FIELD) break;
    case GFL_EV_DEVICE_METRICS: GFL_NDJSON_DEVICE_METRICS(JSON_FIELD) break;
    case GFL_EV_HOST_METRICS: GFL_NDJSON_HOST_METRICS(JSON_FIELD) break;
    default: json_decref(o); return NULL;
    }
    return o;
}
