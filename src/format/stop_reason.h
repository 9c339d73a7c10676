/*
 * Why a session stopped writing before its end: the names are part of the
 * on-disk contract ("log_stopped" lines, session.json, the .gflt stop
 * chunk), written by the sinks and read back by the readers.
 */
#ifndef GPUFL_FORMAT_STOP_REASON_H
#define GPUFL_FORMAT_STOP_REASON_H

typedef enum gpufl__stop_reason {
    GFL_STOP_NONE = 0,
    GFL_STOP_DISK_CAP = 1,   /* session_max_bytes reached */
    GFL_STOP_FREE_SPACE = 2, /* free space below min_free_bytes */
    GFL_STOP_IO_ERROR = 3,   /* a write, rename or open failed */
} gpufl__stop_reason;

/* "none", "disk_cap", "free_space", "io_error"; "unknown" for others. */
const char *gpufl__stop_reason_name(gpufl__stop_reason r);

#endif /* GPUFL_FORMAT_STOP_REASON_H */
