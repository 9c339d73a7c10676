/*
 * session_start, session_end and log_stopped lines (see ndjson_meta.h).
 */
#include "sink/ndjson_meta.h"

#include <string.h>

#include "format/json_out.h"

static char *text(char *p, const char *key, size_t key_len, const char *s, size_t max)
{
    p = gpufl__jput_raw(p, key, key_len);
    return gpufl__jput_str(p, s ? s : "", s ? strnlen(s, max) : 0);
}
#define KT(p, lit, s, max) text((p), (lit), sizeof(lit) - 1, (s), (max))

static char *number(char *p, const char *key, size_t key_len, uint64_t v)
{
    p = gpufl__jput_raw(p, key, key_len);
    return gpufl__jput_u64(p, v);
}
#define KU(p, lit, v) number((p), (lit), sizeof(lit) - 1, (v))

size_t gpufl__ndjson_session_start(char *buf, const gpufl__session_meta *s, const char *channel, unsigned part)
{
    char *p = GFL_JLIT(buf, "{\"type\":\"session_start\"");
    p = KU(p, ",\"ts_ns\":", s->start_ns);
    p = KU(p, ",\"wall_ns\":", s->start_wall_ns);
    p = KT(p, ",\"session_id\":", s->session_id, GFL_NDJSON_META_STR);
    p = KT(p, ",\"app_name\":", s->app_name, GFL_NDJSON_META_STR);
    p = GFL_JLIT(p, ",\"pid\":");
    p = gpufl__jput_i64(p, s->pid);
    p = KT(p, ",\"host\":", s->host, GFL_NDJSON_META_STR);
    p = KT(p, ",\"channel\":", channel, GFL_NDJSON_META_STR);
    p = KU(p, ",\"part\":", part);
    p = KU(p, ",\"format_version\":", s->format_version);
    p = KT(p, ",\"gpufl_version\":", s->gpufl_version, GFL_NDJSON_META_STR);
    p = GFL_JLIT(p, "}\n");
    return (size_t)(p - buf);
}

size_t gpufl__ndjson_session_end(char *buf, const gpufl__session_meta *s, uint64_t end_ns, uint64_t end_wall_ns,
                                 uint64_t lines, uint64_t lost, const uint64_t *dropped)
{
    char *p = GFL_JLIT(buf, "{\"type\":\"session_end\"");
    p = KU(p, ",\"ts_ns\":", end_ns);
    p = KU(p, ",\"wall_ns\":", end_wall_ns);
    p = KT(p, ",\"session_id\":", s->session_id, GFL_NDJSON_META_STR);
    p = KT(p, ",\"app_name\":", s->app_name, GFL_NDJSON_META_STR);
    p = KU(p, ",\"lines\":", lines);
    p = KU(p, ",\"lost\":", lost);
    if (dropped) {
        /* every reason, zeros too: the object's presence says these are
         * the final counts (8 reasons of at most 40 bytes fit the bound) */
        p = GFL_JLIT(p, ",\"dropped\":{");
        for (uint8_t r = 0; r < GFL_DROP_REASON_COUNT; r++) {
            if (r)
                *p++ = ',';
            const char *name = gpufl__drop_reason_name(r);
            p = gpufl__jput_str(p, name, strlen(name));
            *p++ = ':';
            p = gpufl__jput_u64(p, dropped[r]);
        }
        *p++ = '}';
    }
    p = GFL_JLIT(p, "}\n");
    return (size_t)(p - buf);
}

size_t gpufl__ndjson_log_stopped(char *buf, uint64_t ts_ns, const char *reason, const char *detail)
{
    char *p = GFL_JLIT(buf, "{\"type\":\"log_stopped\"");
    p = KU(p, ",\"ts_ns\":", ts_ns);
    p = KT(p, ",\"reason\":", reason, GFL_NDJSON_META_STR);
    p = KT(p, ",\"detail\":", detail, 120);
    p = GFL_JLIT(p, "}\n");
    return (size_t)(p - buf);
}
