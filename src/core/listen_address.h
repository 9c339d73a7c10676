/*
 * A listening address as the options and commands spell it: "ADDR:PORT",
 * ":PORT" (every address) or "[IPV6]:PORT". Shared by the metrics
 * endpoint (session/metrics_http.c) and `gpufl serve` (serve/serve_server.c),
 * so that both accept and refuse the same spellings.
 */
#ifndef GPUFL_CORE_LISTEN_ADDRESS_H
#define GPUFL_CORE_LISTEN_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Splits addr into host ("" = every address; an IPv6 one without its
 * brackets) and port (digits, at most 65535). False when addr is none of
 * the spellings above or a part does not fit its buffer. */
bool gpufl__split_listen_address(const char *addr, char *host, size_t host_len, char *port, size_t port_len);

#endif /* GPUFL_CORE_LISTEN_ADDRESS_H */
