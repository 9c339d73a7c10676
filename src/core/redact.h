/*
 * What gpufl writes or prints in place of secrets. A session directory is
 * shared (copied to colleagues, attached to bug reports, uploaded), and
 * messages end up in CI logs, so an option value that can hold a secret is
 * never written or printed as given: api_key only says whether it is set,
 * and a URL loses its userinfo: "https://user:pw@host/" is written with
 * "***" in place of "user:pw". Any thread; no state.
 */
#ifndef GPUFL_CORE_REDACT_H
#define GPUFL_CORE_REDACT_H

#include <stddef.h>

/* A malloc'd copy of url with the userinfo of its authority (everything
 * before the last '@' in it) replaced by "***"; an unchanged copy when there
 * is none. NULL only when out of memory. */
char *gpufl__url_redact(const char *url);

#endif /* GPUFL_CORE_REDACT_H */
