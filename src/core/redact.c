/*
 * Redacting secrets (see redact.h).
 */
#include "core/redact.h"

#include <stdlib.h>
#include <string.h>

char *gpufl__url_redact(const char *url)
{
    /* RFC 3986: the authority follows "scheme://" and ends at the first
     * '/', '?' or '#'; its userinfo ends at its last '@'. Without a scheme
     * ("user:pw@host:8080") the authority starts the text. */
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    const char *end = auth + strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < end; p++)
        if (*p == '@')
            at = p;
    if (!at)
        return strdup(url);
    size_t head = (size_t)(auth - url), tail = strlen(at);
    char *out = malloc(head + 3 + tail + 1);
    if (!out)
        return NULL;
    memcpy(out, url, head);
    memcpy(out + head, "***", 3);
    memcpy(out + head + 3, at, tail + 1);
    return out;
}
