/*
 * NVML clock-event bits as the words `gpufl devices` and `gpufl monitor`
 * print (see cli.h).
 */
#include <stdio.h>

#include "cli/cli.h"
#include "core/event.h"

void gpufl__throttle_text(uint64_t mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned b = 0; b < GFL_THROTTLE_REASON_COUNT; b++)
        if (mask & (1ull << b))
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "," : "",
                                     gpufl__throttle_reason_name(b));
    if (!used)
        snprintf(buf, len, "none");
}
