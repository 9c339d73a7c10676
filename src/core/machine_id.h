/*
 * This machine's identity: the systemd/D-Bus machine id, written into
 * session.json's host_info so that a reader can tell whether a session was
 * recorded on the machine reading it (host names repeat: every cloud VM
 * may be called "vm"). The readers use it to decide whether module files
 * found here are the ones the recorded stacks point into.
 *
 * Any thread; reads one small file per call (once per session written or
 * read), so nothing is cached.
 */
#ifndef GPUFL_CORE_MACHINE_ID_H
#define GPUFL_CORE_MACHINE_ID_H

#include <stddef.h>

/* Room for an id and its NUL: systemd's are 32 hex digits; longer content
 * is not a machine id. */
#define GPUFL__MACHINE_ID_MAX 65

/* Copies this machine's id (/etc/machine-id, else /var/lib/dbus/machine-id,
 * without its newline; on a machine or container with neither,
 * "boot-<kernel boot id>-root-<device of />" in hex) into out,
 * NUL-terminated. Returns 0, or GPUFL_ENOTFOUND when none of them can be
 * read or holds one line of 1 to 64 printable, non-space characters; out is
 * then "". */
__attribute__((warn_unused_result)) int gpufl__machine_id(char out[GPUFL__MACHINE_ID_MAX]);

#endif /* GPUFL_CORE_MACHINE_ID_H */
