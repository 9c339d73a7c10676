/*
 * Listening addresses (listen_address.h).
 */
#include "core/listen_address.h"

#include <stdlib.h>
#include <string.h>

bool gpufl__split_listen_address(const char *addr, char *host, size_t host_len, char *port, size_t port_len)
{
    const char *colon;
    const char *h = addr;
    size_t hlen;
    if (!addr)
        return false;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':')
            return false;
        h = addr + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon)
            return false;
        hlen = (size_t)(colon - addr);
    }
    size_t plen = strlen(colon + 1);
    if (hlen >= host_len || plen == 0 || plen >= port_len || strspn(colon + 1, "0123456789") != plen)
        return false;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memcpy(port, colon + 1, plen + 1);
    return atol(port) <= 65535;
}
