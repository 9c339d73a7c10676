/*
 * Saying which copy of a session a command read (see cli.h). A session
 * directory written with log_format both holds the session twice, and the
 * copies can differ after a kill or a full disk (read/source_choice.h): a
 * command that read one says so on stderr, so its output (a report, an
 * export on stdout) stays what it was.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "gpufl/trace.h"

void gpufl__cli_note_read(const char *command, const char *files, const char *why, unsigned copies)
{
    if (copies < 2 || !files || !files[0])
        return;
    fprintf(stderr, "gpufl %s: read %s: %s\n", command, files, why ? why : "");
}

void gpufl__cli_note_trace(const char *command, const gpufl_trace *t)
{
    const gpufl_trace_read *r = gpufl_trace_get_read(t);
    gpufl__cli_note_read(command, r->files, r->why, r->copies);
}
