/*
 * Listening addresses (listen_address.h).
 */
#include "core/listen_address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gpufl/gpufl.h"

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

int gpufl__listen_tcp(const char *addr, int backlog, int *fd_out, char *where, size_t where_len, char *why,
                      size_t why_len)
{
    char host[256], port[16];
    if (!gpufl__split_listen_address(addr, host, sizeof host, port, sizeof port)) {
        snprintf(why, why_len, "bad listen address '%s' (want ADDR:PORT, :PORT or [IPV6]:PORT)", addr);
        return GPUFL_EINVAL;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (gai != 0) {
        snprintf(why, why_len, "cannot listen on %s: %s", addr, gai_strerror(gai));
        return GPUFL_EIO;
    }
    /* ":PORT" gets every address; prefer IPv4's any then, which every
     * machine has (an IPv6 socket may not take IPv4 where v6only is set) */
    struct addrinfo *ai = res;
    for (struct addrinfo *a = res; !host[0] && a; a = a->ai_next)
        if (a->ai_family == AF_INET) {
            ai = a;
            break;
        }
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
        snprintf(why, why_len, "cannot listen on %s: %s", addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return GPUFL_EIO;
    }
    freeaddrinfo(res);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned p = 0;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0) {
        if (sa.ss_family == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)&sa;
            inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
            p = ntohs(in->sin_port);
        } else if (sa.ss_family == AF_INET6) {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;
            inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
            p = ntohs(in6->sin6_port);
        }
    }
    snprintf(where, where_len, sa.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, p);
    *fd_out = fd;
    return 0;
}
