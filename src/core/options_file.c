/*
 * JSON config files: an object whose keys are option names, e.g.
 *     {"app_name": "trainer", "system_sample_rate_ms": 50,
 *      "profiling_engine": "trace", "session_max_bytes": "2GiB"}
 * Every problem (unreadable file, bad JSON, unknown key, wrong type, value
 * out of range) is an error naming the file and, where there is one, the key
 * or the line and column; never a value from the file, which may be a key
 * for the backend.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/options.h"
#include "core/regular_file.h"

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* Converts one JSON value to the text form that gpufl__option_set_text
 * parses, so files, variables and flags share one parser. */
static int value_text(const gpufl__option_desc *d, const json_t *v, char *buf, size_t len, const char **text, char *why,
                      size_t why_len)
{
    switch (d->kind) {
    case GFL_OPT_BOOL:
        if (!json_is_boolean(v))
            break;
        *text = json_is_true(v) ? "true" : "false";
        return 0;
    case GFL_OPT_U32:
    case GFL_OPT_BYTES:
        if (json_is_integer(v)) {
            if (json_integer_value(v) < 0) {
                snprintf(why, why_len, "must not be negative");
                return GPUFL_ECONFIG;
            }
            snprintf(buf, len, "%lld", (long long)json_integer_value(v));
            *text = buf;
            return 0;
        }
        if (d->kind == GFL_OPT_BYTES && json_is_string(v)) {
            *text = json_string_value(v);
            return 0;
        }
        break;
    case GFL_OPT_STRING:
    case GFL_OPT_BACKEND:
    case GFL_OPT_ENGINE:
    case GFL_OPT_LOG_FORMAT:
        if (!json_is_string(v))
            break;
        *text = json_string_value(v);
        return 0;
    }
    static const char *const expected[] = {
        [GFL_OPT_STRING] = "a string",     [GFL_OPT_BOOL] = "true or false",
        [GFL_OPT_U32] = "an integer",      [GFL_OPT_BYTES] = "an integer or a size string",
        [GFL_OPT_BACKEND] = "a string",    [GFL_OPT_ENGINE] = "a string",
        [GFL_OPT_LOG_FORMAT] = "a string",
    };
    snprintf(why, why_len, "must be %s, not %s", expected[d->kind], json_kind(v));
    return GPUFL_ECONFIG;
}

/* jansson's reason for a parse error without the file's text: it quotes
 * the text where parsing stopped ("invalid token near 'sk-...'"), which in
 * a config file can be the API key, and a message goes to stderr and into
 * logs. What is left ("invalid token", "'}' expected") names no value; a
 * quoted part longer than one character (a token, a \u escape) is dropped
 * too. */
static void parse_reason(const char *text, char *out, size_t len)
{
    size_t n = 0;
    const char *near = strstr(text, " near ");
    const char *end = near ? near : text + strlen(text);
    for (const char *p = text; p < end && n + 1 < len;) {
        const char *close = *p == '\'' ? memchr(p + 1, '\'', (size_t)(end - p - 1)) : NULL;
        if (close && close - p > 2) {
            p = close + 1;
            continue;
        }
        out[n++] = *p++;
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    if (!n)
        snprintf(out, len, "not valid JSON");
}

int gpufl__config_apply_file(gpufl__config *c, const char *path, char *err, size_t err_len)
{
    json_error_t jerr;
    json_t *root = gpufl__json_load_regular(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        char reason[JSON_ERROR_TEXT_LENGTH];
        if (jerr.line < 1) {
            snprintf(err, err_len, "config file '%s': cannot read it: %s", path, jerr.text);
        } else {
            parse_reason(jerr.text, reason, sizeof reason);
            /* a key is no secret: the duplicate one is named */
            const char *key =
                json_error_code(&jerr) == json_error_duplicate_key ? strstr(jerr.text, " near '\"") : NULL;
            size_t key_len = key ? strlen(key + 8) : 0;
            if (key_len >= 2 && key[8 + key_len - 1] == '\'' && key[8 + key_len - 2] == '"')
                snprintf(err, err_len, "config file '%s': line %d, column %d: %s \"%.*s\"", path, jerr.line,
                         jerr.column, reason, (int)(key_len - 2), key + 8);
            else
                snprintf(err, err_len, "config file '%s': line %d, column %d: %s", path, jerr.line, jerr.column,
                         reason);
        }
        return jerr.line < 1 ? GPUFL_ENOTFOUND : GPUFL_ECONFIG;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        snprintf(err, err_len, "config file '%s': must hold a JSON object of options, not %s", path, json_kind(root));
        rc = GPUFL_ECONFIG;
        goto out;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        const gpufl__option_desc *d = gpufl__option_find(key);
        char why[256], num[32];
        const char *text = NULL;
        if (!d) {
            snprintf(err, err_len, "config file '%s': unknown option \"%s\" (README.md lists them)", path, key);
            rc = GPUFL_ECONFIG;
            goto out;
        }
        if (strcmp(key, "config_file") == 0) {
            snprintf(err, err_len, "config file '%s': \"config_file\" cannot be set from a config file", path);
            rc = GPUFL_ECONFIG;
            goto out;
        }
        if ((rc = value_text(d, value, num, sizeof num, &text, why, sizeof why)) != 0 ||
            (rc = gpufl__option_set_text(c, d, text, why, sizeof why)) != 0) {
            snprintf(err, err_len, "config file '%s': option \"%s\" %s", path, key, why);
            goto out;
        }
    }
out:
    json_decref(root);
    return rc;
}
