/*
 * Stop reasons' names (see stop_reason.h).
 */
#include "format/stop_reason.h"

const char *gpufl__stop_reason_name(gpufl__stop_reason r)
{
    switch (r) {
    case GFL_STOP_NONE: return "none";
    case GFL_STOP_DISK_CAP: return "disk_cap";
    case GFL_STOP_FREE_SPACE: return "free_space";
    case GFL_STOP_IO_ERROR: return "io_error";
    }
    return "unknown";
}
