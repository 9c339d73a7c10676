/*
 * `gpufl mem diagnose DUMP`: an out-of-memory explained. Prints a dump's
 * oom.json (docs/FORMAT.md) as text or as it is, and computes it
 * (present/report/oom_json.h) for a dump or session that has none: a dump
 * written before oom.json existed, or a session that recorded a failed
 * allocation. DUMP is a dump directory, a session directory (its latest
 * out-of-memory dump, else the session itself), session.json or an
 * oom.json. Exits 0 no out-of-memory, 1 one diagnosed, 2 an error.
 *
 * The text is rendered from the JSON document whichever way it came, so
 * the two formats always say the same.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/mem.h"
#include "present/report/oom_json.h"
#include "present/report/summary_text.h"

extern const gpufl__mem_command gpufl__mem_diagnose_command;
#define CMD (&gpufl__mem_diagnose_command)

/* ---- finding the diagnosis ------------------------------------------------ */

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The newest visible out-of-memory dump of the session in dir (names
 * begin with a sequence number), into out; false when there is none. */
static bool latest_oom_dump(const char *dir, char *out, size_t len)
{
    char dumps[4200];
    snprintf(dumps, sizeof dumps, "%s/dumps", dir);
    DIR *d = opendir(dumps);
    if (!d)
        return false;
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 4 || n >= sizeof best || strcmp(e->d_name + n - 4, "-oom") != 0)
            continue;
        if (strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0])
        return false;
    snprintf(out, len, "%s/%s", dumps, best);
    return true;
}

/* Reads a whole file into *text (NUL-terminated). 0, or GFL_MEM_ERROR
 * after saying why on stderr. */
static int read_all(const char *file, char **text)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "gpufl mem diagnose: cannot read %s: %s\n", file, strerror(errno));
        return GFL_MEM_ERROR;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 16384;
            char *p = realloc(buf, ncap);
            if (!p) {
                free(buf);
                fclose(f);
                fprintf(stderr, "gpufl mem diagnose: out of memory reading %s\n", file);
                return GFL_MEM_ERROR;
            }
            buf = p;
            cap = ncap;
        }
        got = fread(buf + len, 1, 4096, f);
        len += got;
    } while (got == 4096);
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(buf);
        fprintf(stderr, "gpufl mem diagnose: cannot read %s\n", file);
        return GFL_MEM_ERROR;
    }
    buf[len] = '\0';
    *text = buf;
    return 0;
}

/* Diagnoses what (a session, dump or trace file) now. */
static int compute(const char *what, char **text)
{
    size_t len;
    bool found;
    char err[1024];
    if (gpufl__oom_json_of(what, text, &len, &found, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl mem diagnose: %s\n", err);
        return GFL_MEM_ERROR;
    }
    return 0;
}

/* The diagnosis of path: the text of an oom.json (read or computed) into
 * *text, and in from the file or directory it came from. *text NULL: no
 * out-of-memory. Returns 0, or GFL_MEM_ERROR after saying why on stderr. */
static int find(const char *path, char **text, char *from, size_t from_len)
{
    char dir[4200], file[4400], dump[4400];
    *text = NULL;
    snprintf(from, from_len, "%s", path);
    if (is_file(path)) {
        if (strcmp(base_name(path), "session.json") != 0) {
            size_t n = strlen(path);
            /* an oom.json (any name ending .json), else a trace file */
            return n > 5 && !strcmp(path + n - 5, ".json") ? read_all(path, text) : compute(path, text);
        }
        snprintf(dir, sizeof dir, "%.*s", (int)(base_name(path) - path), path);
        if (!dir[0])
            snprintf(dir, sizeof dir, ".");
    } else if (is_dir(path)) {
        snprintf(dir, sizeof dir, "%s", path);
    } else {
        fprintf(stderr, "gpufl mem diagnose: %s: %s\n", path, errno ? strerror(errno) : "not found");
        return GFL_MEM_ERROR;
    }
    snprintf(file, sizeof file, "%s/%s", dir, GPUFL_OOM_JSON);
    if (!is_file(file) && latest_oom_dump(dir, dump, sizeof dump)) { /* a session: its latest OOM */
        snprintf(dir, sizeof dir, "%s", dump);
        snprintf(file, sizeof file, "%s/%s", dir, GPUFL_OOM_JSON);
    }
    if (is_file(file)) {
        snprintf(from, from_len, "%s", file);
        return read_all(file, text);
    }
    snprintf(from, from_len, "%s", dir);
    return compute(dir, text);
}

/* ---- text ----------------------------------------------------------------- */

typedef struct sz {
    char s[32];
} sz;

/* A byte figure of obj, "unknown" when null or absent. */
static sz bytes_of(json_t *obj, const char *key)
{
    sz out;
    json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        gpufl__format_bytes((uint64_t)json_integer_value(v), out.s, sizeof out.s);
    else
        snprintf(out.s, sizeof out.s, "unknown");
    return out;
}

static const char *str_of(json_t *obj, const char *key, const char *none)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : none;
}

/* text wrapped at width columns, each line indented. */
static void wrapped(FILE *out, const char *text, const char *indent, size_t width)
{
    size_t col = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (!word)
            break;
        if (col && col + 1 + word > width) {
            fputc('\n', out);
            col = 0;
        }
        if (!col) {
            fputs(indent, out);
            col = strlen(indent);
        } else {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, word, out);
        col += word;
        p += word;
    }
    if (col)
        fputc('\n', out);
}

static void print_live(FILE *out, json_t *doc)
{
    json_t *live = json_object_get(doc, "live");
    json_t *drv = json_object_get(live, "driver"), *fw = json_object_get(live, "framework");
    fprintf(out,
            "\nLive on the device at the out-of-memory: %lld driver allocations (%s), %lld framework blocks (%s)\n",
            (long long)json_integer_value(json_object_get(drv, "count")), bytes_of(drv, "bytes").s,
            (long long)json_integer_value(json_object_get(fw, "count")), bytes_of(fw, "bytes").s);
    json_t *list = json_object_get(doc, "largest_live");
    if (!json_array_size(list))
        return;
    fprintf(out, "\nLargest live allocations:\n");
    fprintf(out, "  %3s  %-9s  %10s  %-16s  %10s  %8s  %s\n", "#", "layer", "bytes", "address", "time", "thread",
            "scope / op");
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a)
    {
        char when[32], thread[16] = "-";
        snprintf(when, sizeof when, "%.3f s", json_number_value(json_object_get(a, "time_s")));
        if (json_is_integer(json_object_get(a, "thread")))
            snprintf(thread, sizeof thread, "%lld", (long long)json_integer_value(json_object_get(a, "thread")));
        const char *scope = str_of(a, "scope", NULL), *nvtx = str_of(a, "nvtx", NULL);
        fprintf(out, "  %3zu  %-9s  %10s  %-16s  %10s  %8s  %s%s%s\n", i + 1, str_of(a, "layer", "?"),
                bytes_of(a, "bytes").s, str_of(a, "address", "?"), when, thread, scope ? scope : "",
                scope && nvtx ? " / " : "", nvtx ? nvtx : (scope ? "" : "-"));
        json_t *inside = json_object_get(a, "framework_blocks");
        if (json_is_object(inside)) {
            json_int_t nb = json_integer_value(json_object_get(inside, "count"));
            fprintf(out, "         a segment of the framework's allocator: %lld block%s in use, %s (listed apart)\n",
                    (long long)nb, nb == 1 ? "" : "s", bytes_of(inside, "bytes").s);
        }
        size_t k;
        json_t *f;
        json_array_foreach(json_object_get(a, "stack"), k, f) fprintf(out, "         at %s\n", json_string_value(f));
    }
}

static void print_text(FILE *out, json_t *doc, const char *from)
{
    const char *detail = str_of(doc, "detail", NULL);
    fprintf(out, "Out of memory on GPU %lld at %.3f s into the session (%s)\n",
            (long long)json_integer_value(json_object_get(doc, "device")),
            json_number_value(json_object_get(doc, "time_s")),
            !strcmp(str_of(doc, "source", ""), "framework") ? "reported by the framework" : "a CUDA allocation failed");
    fprintf(out, "  from:           %s\n", from);
    if (detail)
        fprintf(out, "  detail:         %s\n", detail);
    fprintf(out, "  requested:      %s\n", bytes_of(doc, "requested_bytes").s);
    fprintf(out, "  classification: %s\n", str_of(doc, "classification", "?"));
    wrapped(out, str_of(doc, "explanation", ""), "    ", 100);

    fprintf(out, "\nDevice memory (%s): free %s of %s\n", str_of(doc, "device_memory_source", "none"),
            bytes_of(doc, "device_free_bytes").s, bytes_of(doc, "device_total_bytes").s);
    fprintf(out, "  used by this process %s, by all processes %s\n", bytes_of(doc, "process_used_bytes").s,
            bytes_of(doc, "all_processes_used_bytes").s);
    json_t *al = json_object_get(doc, "allocator");
    if (json_is_object(al)) {
        fprintf(out, "\nAllocator (%s): allocated %s, reserved %s, active %s, inactive split %s, largest free %s\n",
                str_of(al, "framework", "framework"), bytes_of(al, "allocated").s, bytes_of(al, "reserved").s,
                bytes_of(al, "active").s, bytes_of(al, "inactive_split").s, bytes_of(al, "largest_free").s);
        fprintf(out, "  retries after emptying the cache: %lld, out-of-memory errors: %lld\n",
                (long long)json_integer_value(json_object_get(al, "alloc_retries")),
                (long long)json_integer_value(json_object_get(al, "ooms")));
        json_t *fr = json_object_get(doc, "fragmentation");
        fprintf(out, "  cached, not allocated: %s; in split blocks: %.1f %% of reserved\n",
                bytes_of(fr, "reserved_minus_allocated").s, 100.0 * json_number_value(json_object_get(fr, "fraction")));
    } else {
        fprintf(out, "\nAllocator: no framework allocator state recorded\n");
    }
    print_live(out, doc);
}

/* ---- the command ------------------------------------------------------------ */

static int run(int argc, char **argv)
{
    enum { O_FORMAT = 1, O_OUTPUT };
    static const struct option opts[] = {
        {"format", required_argument, 0, O_FORMAT}, {"output", required_argument, 0, O_OUTPUT}, {0, 0, 0, 0}};
    bool json_out = false;
    const char *output = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == O_FORMAT && (!strcmp(optarg, "txt") || !strcmp(optarg, "text")))
            json_out = false;
        else if (c == O_FORMAT && !strcmp(optarg, "json"))
            json_out = true;
        else if (c == O_OUTPUT)
            output = optarg;
        else
            return gpufl__mem_usage_error(CMD, "bad argument '%s'", argv[optind - 1 > 0 ? optind - 1 : 0]);
    }
    if (optind + 1 != argc)
        return gpufl__mem_usage_error(CMD, optind >= argc ? "which dump?" : "takes one dump");
    const char *path = argv[optind];
    char *text = NULL, from[4400] = "";
    errno = 0;
    int rc = find(path, &text, from, sizeof from);
    if (rc != 0)
        return rc;
    if (!text) {
        fprintf(json_out ? stderr : stdout, "gpufl mem diagnose: no out-of-memory in %s\n", from);
        return GFL_MEM_OK;
    }
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!json_is_object(doc) || strcmp(str_of(doc, "format", ""), "gpufl-oom") != 0) {
        if (doc)
            fprintf(stderr, "gpufl mem diagnose: %s: not an oom.json (no \"format\": \"gpufl-oom\")\n", from);
        else
            fprintf(stderr, "gpufl mem diagnose: %s: not valid JSON (line %d: %s)\n", from, jerr.line, jerr.text);
        json_decref(doc);
        free(text);
        return GFL_MEM_ERROR;
    }
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "gpufl mem diagnose: cannot write %s: %s\n", output, strerror(errno));
        json_decref(doc);
        free(text);
        return GFL_MEM_ERROR;
    }
    if (json_out)
        fputs(text, out);
    else
        print_text(out, doc, from);
    rc = GFL_MEM_FOUND;
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "gpufl mem diagnose: cannot write %s\n", output ? output : "the output");
        rc = GFL_MEM_ERROR;
    }
    if (output && fclose(out) != 0 && rc != GFL_MEM_ERROR) {
        fprintf(stderr, "gpufl mem diagnose: cannot write %s: %s\n", output, strerror(errno));
        rc = GFL_MEM_ERROR;
    }
    json_decref(doc);
    free(text);
    return rc;
}

const gpufl__mem_command gpufl__mem_diagnose_command = {
    "diagnose", run, "DUMP [--format txt|json] [--output FILE]",
    "Explains an out-of-memory: what was asked for, what the GPU, the framework's allocator and other\n"
    "processes held, the largest live allocations, and whether it was real exhaustion, fragmentation\n"
    "or another process.",
    "DUMP: a dump directory (<session>/dumps/NNNN-oom), a session directory (its latest out-of-memory\n"
    "dump, else the session itself), a session.json or an oom.json. A dump's oom.json is printed; a\n"
    "dump or session without one (an older dump, a failed allocation in a session) is diagnosed now.\n"
    "\n"
    "  --format txt|json   text (default), or the oom.json document (docs/FORMAT.md)\n"
    "  --output FILE       write there instead of standard output\n"
    "\n"
    "Exit codes: 0 no out-of-memory found, 1 an out-of-memory diagnosed, 2 an error or bad usage.\n"};
