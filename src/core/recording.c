/*
 * The recording state (see recording.h).
 */
#include "core/recording.h"

_Atomic bool gpufl__recording_flag;
_Atomic uint32_t gpufl__session_gen;
