/*
 * Loading the device plugin for engines above Monitor. A plugin that is
 * missing or fails to start is a logged downgrade to Monitor, never an
 * error for the program. Called by the session, under its lifecycle lock.
 */
#ifndef GPUFL_CORE_PLUGIN_H
#define GPUFL_CORE_PLUGIN_H

#include <stdbool.h>

#include "core/session_info.h"

/* Loads and starts the plugin the session's options call for, if any.
 * Returns true when a plugin is running. */
bool gpufl__plugin_start(const gpufl__session_info *info);

/* Flushes and stops the running plugin (it stays loaded). */
void gpufl__plugin_stop(void);

/* Name of the running plugin, or NULL. */
const char *gpufl__plugin_name(void);

#endif /* GPUFL_CORE_PLUGIN_H */
