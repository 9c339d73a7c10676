/*
 * A crash record (crash.h) as events: what the collector writes once a
 * handler has published one. Collector thread, once per session at most.
 *
 * The stack's raw addresses become module + offset here, not in the
 * handler: naming a module (dladdr) takes the dynamic loader's lock, which
 * the crashed thread may hold. The offsets are those of `stack` events
 * (docs/FORMAT.md): the address in the module's ELF file.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "collect/crash.h"
#include "core/intern.h"

void gpufl__crash_event(const gpufl__crash_record *r, gfl_event *out)
{
    memset(out, 0, sizeof *out);
    out->h.type = GFL_EV_CRASH;
    out->h.flags = r->flags;
    out->h.tid = r->tid;
    out->h.ts = r->ts;
    out->u.crash = r->info;
}

void gpufl__crash_scope_event(const gpufl__crash_record *r, uint32_t i, gfl_event *out)
{
    const gpufl__crash_scope *s = &r->scopes[i];
    memset(out, 0, sizeof *out);
    out->h.type = GFL_EV_CRASH_SCOPE;
    out->h.tid = s->tid;
    out->h.ts = r->ts;
    out->u.scope.id = s->id;
    out->u.scope.parent_id = s->parent;
    out->u.scope.begin_ts = s->begin_ts;
    out->u.scope.name = s->name;
    out->u.scope.depth = s->depth;
}

/* The program's own path: dladdr names the executable by argv[0]. */
static const char *exe_path(void)
{
    static char path[4096];
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = '\0';
    }
    return path;
}

/* Code in no module (JIT), or too far into one, keeps the low 32 bits of
 * its address under module 0, as `stack` frames do. */
static gfl_stack_frame resolve(uintptr_t ip)
{
    gfl_stack_frame f = {0, (uint32_t)ip};
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((const void *)ip, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return f;
    uintptr_t offset = ip - (uintptr_t)lm->l_addr;
    const char *path = lm->l_name && lm->l_name[0] ? lm->l_name : exe_path();
    if (offset > UINT32_MAX || !path[0])
        return f;
    f.module = gpufl__intern(path);
    f.offset = (uint32_t)offset;
    return f;
}

unsigned gpufl__crash_stack_events(const gpufl__crash_record *r, gfl_event out[GFL_CRASH_STACK_EVENTS])
{
    unsigned total = r->info.frames < GFL_CRASH_MAX_FRAMES ? r->info.frames : GFL_CRASH_MAX_FRAMES;
    unsigned n = 0;
    for (unsigned first = 0; first < total; first += GFL_STACK_FRAMES_PER_EVENT, n++) {
        gfl_event *ev = &out[n];
        memset(ev, 0, sizeof *ev);
        ev->h.type = GFL_EV_CRASH_STACK;
        ev->h.tid = r->tid;
        ev->h.ts = r->ts;
        gfl_stack_payload *s = &ev->u.stack;
        unsigned count = total - first < GFL_STACK_FRAMES_PER_EVENT ? total - first : GFL_STACK_FRAMES_PER_EVENT;
        s->first = (uint16_t)first;
        s->total = (uint16_t)total;
        s->count = (uint8_t)count;
        s->truncated = r->info.stack_truncated;
        for (unsigned k = 0; k < count; k++)
            s->frames[k] = resolve(r->frames[first + k]);
    }
    return n;
}
