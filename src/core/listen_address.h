/*
 * A listening address as the options and commands spell it: "ADDR:PORT",
 * ":PORT" (every address) or "[IPV6]:PORT", and the socket listening on
 * it. Shared by the metrics endpoint (session/metrics_http.c) and `gpufl
 * serve` (serve/serve_server.c), so that both accept and refuse the same
 * spellings and listen the same way.
 */
#ifndef GPUFL_CORE_LISTEN_ADDRESS_H
#define GPUFL_CORE_LISTEN_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Splits addr into host ("" = every address; an IPv6 one without its
 * brackets) and port (digits, at most 65535). False when addr is none of
 * the spellings above or a part does not fit its buffer. */
bool gpufl__split_listen_address(const char *addr, char *host, size_t host_len, char *port, size_t port_len);

/* Listens on addr (a spelling above) with `backlog`: a TCP socket,
 * non-blocking and close-on-exec, with SO_REUSEADDR; ":PORT" takes IPv4's
 * any address. 0 with the socket in *fd and where it listens ("IP:PORT",
 * "[IPV6]:PORT": the port the system chose for 0) in where; else
 * GPUFL_EINVAL (not a spelling above) or GPUFL_EIO (the system refused),
 * why saying which, nothing left open. */
__attribute__((warn_unused_result)) int gpufl__listen_tcp(const char *addr, int backlog, int *fd, char *where,
                                                          size_t where_len, char *why, size_t why_len);

#endif /* GPUFL_CORE_LISTEN_ADDRESS_H */
