/*
 * A program outside the gpufl tree, as a user would write it: it includes
 * <gpufl/gpufl.h>, records a scope and checks that a session was written.
 * Usage: consumer LOG_PATH
 */
#include <gpufl/gpufl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "consumer";
    o.log_path = argv[1];
    if (!gpufl_init(&o)) {
        fprintf(stderr, "consumer: %s\n", gpufl_last_error());
        return 1;
    }
    GFL_SCOPE("consumer/work")
    {
        gpufl_system_start("consumer");
        gpufl_system_stop("consumer");
    }
    gpufl_shutdown();
    char path[4200];
    snprintf(path, sizeof path, "%s/session.json", gpufl_session_dir());
    struct stat st;
    if (!gpufl_session_dir()[0] || stat(path, &st) != 0 || st.st_size == 0) {
        fprintf(stderr, "consumer: no session.json at '%s'\n", path);
        return 1;
    }
    printf("consumer: recorded %s with gpufl %s\n", gpufl_session_dir(), gpufl_version());
    return 0;
}
