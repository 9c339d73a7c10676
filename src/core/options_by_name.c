/*
 * Options by name: gpufl_options_size, gpufl_option_name, gpufl_options_set.
 *
 * For bindings (the Python package) that should not mirror gpufl_options'
 * layout: they allocate gpufl_options_size() bytes, fill them with
 * gpufl_options_init() and set each option from its text through the one
 * option table (core/options_table.h), parsed as the environment and config
 * files are. So a binding's option names and value spellings are the
 * library's and cannot drift from it.
 *
 * Any thread, on a struct the caller owns; called a few times per
 * gpufl_init, never on a hot path.
 */
#include <string.h>

#include "core/log.h"
#include "core/options.h"
#include "gpufl/gpufl.h"

GPUFL_API size_t gpufl_options_size(void) { return sizeof(gpufl_options); }

GPUFL_API const char *gpufl_option_name(size_t i) { return i < gpufl__options_count ? gpufl__options[i].name : NULL; }

GPUFL_API int gpufl_options_set(gpufl_options *opts, const char *name, const char *value)
{
    gpufl__clear_error();
    if (!opts || !name) {
        gpufl__set_error("gpufl_options_set: %s is NULL", opts ? "the option name" : "the options");
        return GPUFL_EINVAL;
    }
    const gpufl__option_desc *d = gpufl__option_find(name);
    if (!d) {
        gpufl__set_error("gpufl_options_set: there is no option '%.64s' (gpufl_option_name() lists them)", name);
        return GPUFL_EINVAL;
    }
    /* A struct older than this field, or never set up: writing would go
     * past the caller's memory, or be ignored by gpufl_init. */
    if (opts->struct_size < d->offset + d->size) {
        gpufl__set_error("gpufl_options_set: option %s is not in these options (struct_size %zu; "
                         "set them up with gpufl_options_init())",
                         d->name, opts->struct_size);
        return GPUFL_EINVAL;
    }
    char *slot = (char *)opts + d->offset;
    if (!value) { /* back to the default */
        gpufl_options def;
        gpufl_options_init(&def);
        memcpy(slot, (const char *)&def + d->offset, d->size);
        return 0;
    }
    if (d->kind == GFL_OPT_STRING) { /* kept as given, like a field set in code */
        memcpy(slot, &value, sizeof value);
        return 0;
    }
    char why[256];
    if (gpufl__option_parse(opts, d, value, why, sizeof why) != 0) {
        gpufl__set_error("gpufl_options_set: option %s = '%.64s' %s", d->name, value, why);
        return GPUFL_EINVAL;
    }
    return 0;
}
