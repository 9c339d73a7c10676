/*
 * Options: the defaults, parsing of option values from text (environment,
 * command line) and JSON (config files), and resolution of the final options
 * of a session in the documented order:
 *     defaults < config_file < environment < fields set in code
 * with GPUFL_DISABLED and enabled=false over all of them.
 *
 * Called from gpufl_init() and the CLI; not on any hot path.
 */
#ifndef GPUFL_CORE_OPTIONS_H
#define GPUFL_CORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "gpufl/gpufl.h"

typedef enum gpufl__opt_kind {
    GFL_OPT_STRING,
    GFL_OPT_BOOL,
    GFL_OPT_U32,
    GFL_OPT_BYTES,
    GFL_OPT_BACKEND,
    GFL_OPT_ENGINE,
    GFL_OPT_LOG_FORMAT,
} gpufl__opt_kind;

typedef struct gpufl__option_desc {
    const char *name;
    gpufl__opt_kind kind;
    size_t offset;
    size_t size;
    const char *env;
    const char *default_doc;
    unsigned long long min, max;
    const char *doc;
} gpufl__option_desc;

extern const gpufl__option_desc gpufl__options[];
extern const size_t gpufl__options_count;

/* Resolved options of a session. Every string field of `o` is owned here
 * (never NULL), and `o` has struct_size == sizeof(gpufl_options). */
typedef struct gpufl__config {
    gpufl_options o;
} gpufl__config;

#define GFL_ERR_LEN 512

const gpufl__option_desc *gpufl__option_find(const char *name);

/* Whether option d holds a URL, which may carry a password as userinfo and
 * is written and printed only without it (core/redact.h). */
bool gpufl__option_is_url(const gpufl__option_desc *d);

/* GPUFL_DISABLED set to 1/true/yes/on, any case. Any other value but
 * 0/false/no/off and empty is warned about on stderr, once per process. */
bool gpufl__env_disabled(void);

/* Parses `text` as the value of option d into c (strings are copied).
 * Returns 0, or GPUFL_ECONFIG with a reason such as "is not an integer" in
 * why (no source named: the caller knows whether it came from a variable,
 * a flag or a file), c unchanged. */
int gpufl__option_set_text(gpufl__config *c, const gpufl__option_desc *d, const char *text, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* Parses `text` as the value of option d, which is not a string option,
 * into o: the same parsing as gpufl__option_set_text, for a caller's own
 * struct (gpufl_options_set). Returns 0, or GPUFL_ECONFIG with the reason in
 * why and o unchanged; GPUFL_EINVAL for a string option. */
int gpufl__option_parse(gpufl_options *o, const gpufl__option_desc *d, const char *text, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* Sets a string option, replacing (and freeing) the old value.
 * Returns 0 or GPUFL_ENOMEM. */
int gpufl__option_set_string(gpufl__config *c, const gpufl__option_desc *d, const char *value)
    __attribute__((warn_unused_result));

/* Checks an integer or enum option against its range; 0 or GPUFL_ECONFIG. */
int gpufl__option_check(const gpufl__config *c, const gpufl__option_desc *d, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* Applies a JSON config file (options_file.c). Returns 0, or GPUFL_ECONFIG /
 * GPUFL_ENOTFOUND with a message naming the file and the key in err. */
int gpufl__config_apply_file(gpufl__config *c, const char *path, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/*
 * Resolves the session options from `user` (NULL = all defaults). On success
 * returns 0 with *out filled (free it with gpufl__config_free); otherwise a
 * negative gpufl_err with a message in err and *out empty.
 * Fields past user->struct_size count as left at their default.
 */
int gpufl__config_resolve(const gpufl_options *user, gpufl__config *out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Warns (stderr, once per option) about every string option of c that is
 * not valid UTF-8, naming the option and the offset of the first bad byte:
 * session.json and the logs are JSON text, and record such a value with
 * U+FFFD in place of each bad byte (core/utf8.h). */
void gpufl__config_warn_not_utf8(const gpufl__config *c);

/* The defaults, with owned strings. 0 or GPUFL_ENOMEM. */
int gpufl__config_defaults(gpufl__config *c) __attribute__((warn_unused_result));
void gpufl__config_free(gpufl__config *c);

const char *gpufl__backend_name(gpufl_backend b);
const char *gpufl__engine_name(gpufl_engine e);
const char *gpufl__log_format_name(gpufl_log_format f);
/* Case-insensitive; '_' and '-' ignored ("PcSampling" = "pc_sampling"). */
int gpufl__engine_parse(const char *text, gpufl_engine *out);
int gpufl__backend_parse(const char *text, gpufl_backend *out);
int gpufl__log_format_parse(const char *text, gpufl_log_format *out);
int gpufl__bool_parse(const char *text, bool *out);
/* "123", "64KiB", "64M", "4GB" (binary units). */
int gpufl__bytes_parse(const char *text, unsigned long long *out);

#endif /* GPUFL_CORE_OPTIONS_H */
