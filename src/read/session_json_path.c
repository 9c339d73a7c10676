/*
 * Which session.json speaks for a path (session_json_path.h).
 */
#include "read/session_json_path.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void gpufl__session_json_of(const char *path, char *out, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(out, len, "%s/session.json", path);
        return;
    }
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, len, "session.json");
    else
        snprintf(out, len, "%.*s/session.json", (int)(slash - path), path);
}
