/*
 * The CUPTI guard (see cupti_guard.h). Everything here runs on the calling
 * program's threads, inside its CUPTI calls: no allocation, no stdio, no
 * locks beyond the loader's own.
 */
#include "backend/cupti/cupti_guard.h"

#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static _Atomic int holding;
static _Atomic unsigned refused, took_buffers;
static _Atomic int told;  /* the stderr notice, once per process */
static _Atomic int named; /* first_client written */
static char first_client[sizeof((gpufl_cupti_guard_counts *)0)->first_client];

/* the plugin's view of the two functions it looks up */
EXPORT gpufl_cupti_guard_hold_fn gpufl_cupti_guard_hold;
EXPORT gpufl_cupti_guard_seen_fn gpufl_cupti_guard_seen;

EXPORT void gpufl_cupti_guard_hold(int on) { atomic_store(&holding, on ? 1 : 0); }

EXPORT void gpufl_cupti_guard_seen(gpufl_cupti_guard_counts *out)
{
    memset(out, 0, sizeof *out);
    out->refused = atomic_load(&refused);
    out->took_buffers = atomic_load(&took_buffers);
    if (atomic_load(&named) == 2)
        memcpy(out->first_client, first_client, sizeof first_client);
}

/* ---- the real libcupti ------------------------------------------------------ */

typedef struct found {
    char path[4096];
} found;

static int find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || strncmp(base, "libcupti.so", 11) != 0)
        return 0;
    snprintf(((found *)data)->path, sizeof((found *)data)->path, "%s", name);
    return 1;
}

/* The next definition of name after ours: in the global scope when
 * libcupti is there, else in the libcupti already loaded privately (a
 * Python extension's dependency, or our plugin's dlopen), which is the
 * copy the caller's own reference was linked against. NULL when no
 * libcupti is loaded at all. */
static void *real(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (fn)
        return fn;
    found f = {{0}};
    if (!dl_iterate_phdr(find_cupti, &f))
        return NULL;
    void *lib = dlopen(f.path, RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return NULL;
    fn = dlsym(lib, name);
    dlclose(lib); /* NOLOAD took a reference; the library stays loaded */
    return fn;
}

/* ---- noting another client ---------------------------------------------------- */

static const char *client_name(const void *return_address)
{
    Dl_info info;
    if (!dladdr(return_address, &info) || !info.dli_fname || !info.dli_fname[0])
        return "the program";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static void name_first(const char *client)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&named, &expected, 1))
        return;
    snprintf(first_client, sizeof first_client, "%s", client);
    atomic_store(&named, 2);
}

static void refused_while_held(const void *return_address)
{
    const char *client = client_name(return_address);
    atomic_fetch_add(&refused, 1);
    name_first(client);
    if (atomic_exchange(&told, 1))
        return;
    char line[512];
    int n = snprintf(line, sizeof line,
                     "gpufl: another CUPTI client (%s) was refused because gpufl holds CUPTI: it records no "
                     "GPU activity while gpufl traces. Call gpufl_trace_pause() before it and "
                     "gpufl_trace_resume() after it, or record with --engine monitor.\n",
                     client);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A subscription's answer, passed back after noting a refusal that our
 * holding CUPTI caused. */
static CUptiResult noted(CUptiResult rc, const void *return_address)
{
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && atomic_load(&holding))
        refused_while_held(return_address);
    return rc;
}

/* ---- the calls passed on ---------------------------------------------------------- */

EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                           void *userdata)
{
    __typeof__(&cuptiSubscribe) next = (__typeof__(&cuptiSubscribe))real("cuptiSubscribe");
    if (!next)
        return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult rc = next(subscriber, callback, userdata);
    return noted(rc, __builtin_return_address(0));
}

EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                              void *userdata, CUpti_SubscriberParams *params)
{
    __typeof__(&cuptiSubscribe_v2) next = (__typeof__(&cuptiSubscribe_v2))real("cuptiSubscribe_v2");
    if (!next)
        return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult rc = next(subscriber, callback, userdata, params);
    return noted(rc, __builtin_return_address(0));
}

EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                           CUpti_BuffersCallbackCompleteFunc completed)
{
    __typeof__(&cuptiActivityRegisterCallbacks) next =
        (__typeof__(&cuptiActivityRegisterCallbacks))real("cuptiActivityRegisterCallbacks");
    if (!next)
        return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult rc = next(requested, completed);
    if (rc == CUPTI_SUCCESS && atomic_load(&holding)) {
        atomic_fetch_add(&took_buffers, 1);
        name_first(client_name(__builtin_return_address(0)));
    }
    return rc;
}
