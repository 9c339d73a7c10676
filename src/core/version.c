/*
 * gpufl_version(): the library's version, which every output that names
 * its writer prints; here at the bottom so that the readers and renderers
 * need nothing of the recording side to say it.
 */
#include "gpufl/gpufl.h"

GPUFL_API const char *gpufl_version(void) { return GPUFL_VERSION_STRING; }
