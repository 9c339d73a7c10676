/*
 * Option values the commands share (cli.h): a number in a range, a list
 * of GPU indices.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

bool gpufl__cli_number(const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

bool gpufl__cli_devices(const char *text, bool *wanted, unsigned count)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    bool any = false;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (!gpufl__cli_number(tok, 0, count - 1, &v) || v != floor(v))
            return false;
        wanted[(int)v] = any = true;
    }
    return any;
}
