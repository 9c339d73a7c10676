/*
 * Where a session was recorded (see session_origin.h).
 */
#include "read/session_origin.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/machine_id.h"
#include "core/regular_file.h"
#include "read/session_json_path.h"

gpufl__session_origin gpufl__session_origin_of(const char *path, char *why, size_t why_len)
{
    char file[4200];
    gpufl__session_json_of(path, file, sizeof file);
    json_error_t jerr;
    json_t *root = gpufl__json_load_regular(file, 0, &jerr);
    if (!root) {
        struct stat st;
        if (stat(file, &st) != 0)
            snprintf(why, why_len, "not known to be recorded on this machine (no session.json beside it)");
        else
            snprintf(why, why_len, "not known to be recorded on this machine (%s: %s)", file,
                     jerr.line < 1 ? jerr.text : "does not parse");
        return GFL_ORIGIN_UNKNOWN;
    }
    const char *theirs = json_string_value(json_object_get(json_object_get(root, "host_info"), "machine_id"));
    char ours[GPUFL__MACHINE_ID_MAX];
    gpufl__session_origin o;
    if (!theirs || !theirs[0]) {
        snprintf(why, why_len,
                 "not known to be recorded on this machine (its session.json has no "
                 "host_info.machine_id: an older gpufl wrote it)");
        o = GFL_ORIGIN_UNKNOWN;
    } else if (gpufl__machine_id(ours) != 0) {
        snprintf(why, why_len,
                 "not known to be recorded on this machine (this machine has no "
                 "/etc/machine-id to compare)");
        o = GFL_ORIGIN_UNKNOWN;
    } else if (strcmp(theirs, ours) != 0) {
        snprintf(why, why_len, "recorded on another machine (machine id differs)");
        o = GFL_ORIGIN_ELSEWHERE;
    } else {
        snprintf(why, why_len, "recorded on this machine");
        o = GFL_ORIGIN_HERE;
    }
    json_decref(root);
    return o;
}
