/*
 * Dates and times in UTC as option values (cli.h): `gpufl fleet`'s
 * --since, --until, --before and --after.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

#define NS 1000000000ll

bool gpufl__cli_time(const char *text, int64_t *start_ns, int64_t *end_ns)
{
    int y, mo, d, h = 0, mi = 0, s = 0, n = 0;
    size_t len = strlen(text);
    int64_t unit;
    if (sscanf(text, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && (size_t)n == len && n == 10)
        unit = 86400;
    else if (sscanf(text, "%4d-%2d-%2dT%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5 && n == 16 &&
             ((size_t)n == len || ((size_t)n + 1 == len && text[n] == 'Z')))
        unit = 60;
    else if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) == 6 && n == 19 &&
             ((size_t)n == len || ((size_t)n + 1 == len && text[n] == 'Z')))
        unit = 1;
    else
        return false;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59)
        return false;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = s};
    time_t t = timegm(&tm);
    if (tm.tm_mday != d) /* 2026-02-30 rolled over */
        return false;
    *start_ns = (int64_t)t * NS;
    *end_ns = ((int64_t)t + unit) * NS;
    return true;
}

bool gpufl__cli_time_range(const char *text, int64_t *from_ns, int64_t *to_ns)
{
    const char *dots = strstr(text, "..");
    int64_t a0, a1, b0, b1;
    if (!dots) {
        if (!gpufl__cli_time(text, &a0, &a1))
            return false;
        *from_ns = a0, *to_ns = a1;
        return true;
    }
    char first[64];
    size_t n = (size_t)(dots - text);
    if (n >= sizeof first)
        return false;
    memcpy(first, text, n);
    first[n] = '\0';
    if (!gpufl__cli_time(first, &a0, &a1) || !gpufl__cli_time(dots + 2, &b0, &b1) || b1 <= a0)
        return false;
    *from_ns = a0, *to_ns = b1;
    return true;
}
