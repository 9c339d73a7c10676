/*
 * Reading this machine's id (see machine_id.h).
 */
#include "core/machine_id.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gpufl/gpufl.h"

/* The id in the file at path, or -1 when it is unreadable or not one line
 * of printable, non-space characters that fits. */
static int read_id(const char *path, char out[GPUFL__MACHINE_ID_MAX])
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[GPUFL__MACHINE_ID_MAX + 2]; /* the id, its newline, and one more to see it is too long */
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    if (n && line[n - 1] == '\n')
        line[--n] = '\0';
    if (n == 0 || n >= GPUFL__MACHINE_ID_MAX)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (line[i] <= ' ' || line[i] > '~')
            return -1;
    memcpy(out, line, n + 1);
    return 0;
}

/* Containers often have neither machine-id file, and a session read back
 * in the container that recorded it must still be named. The kernel's boot
 * id is shared by every container of one host, so the root file system's
 * device (each container's overlay root has its own) goes with it: the pair
 * names one file system tree during one boot, which is what the module
 * files depend on. After a reboot such sessions read as recorded elsewhere,
 * the safe side. */
static int boot_and_root(char out[GPUFL__MACHINE_ID_MAX])
{
    char boot[GPUFL__MACHINE_ID_MAX];
    struct stat root;
    if (read_id("/proc/sys/kernel/random/boot_id", boot) != 0 || stat("/", &root) != 0)
        return -1;
    int n = snprintf(out, GPUFL__MACHINE_ID_MAX, "boot-%s-root-%llx", boot, (unsigned long long)root.st_dev);
    return n > 0 && n < GPUFL__MACHINE_ID_MAX ? 0 : -1;
}

int gpufl__machine_id(char out[GPUFL__MACHINE_ID_MAX])
{
    out[0] = '\0';
    /* systemd's file first; D-Bus keeps the same id on systems without it */
    if (read_id("/etc/machine-id", out) == 0 || read_id("/var/lib/dbus/machine-id", out) == 0 ||
        boot_and_root(out) == 0)
        return 0;
    out[0] = '\0';
    return GPUFL_ENOTFOUND;
}
