/*
 * Symbolization with elfutils libdwfl (see symbolize.h).
 *
 * Each module gets its own Dwfl session with the file reported at bias 0
 * (dwfl_report_elf, base 0), so a module's addresses are exactly its ELF
 * virtual addresses, which is what the recorder writes; modules never
 * overlap because they never share a session. The cache is a plain array
 * searched by path: a session has tens of modules.
 *
 * C++ names are demangled with libstdc++'s __cxa_demangle, looked up at run
 * time (dlopen), so this C code needs no C++ runtime at link time; without
 * libstdc++ names stay mangled.
 */
#include "read/symbolize.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/regular_file.h"
#include "gpufl/gpufl.h"

#ifdef GPUFL_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

typedef struct module_entry {
    char *path;
#ifdef GPUFL_HAVE_LIBDW
    Dwfl *dwfl; /* NULL: the file could not be opened */
    Dwfl_Module *mod;
#endif
} module_entry;

struct gpufl__symbolizer {
    module_entry *modules;
    size_t n, cap;
    /* __cxa_demangle, looked up once; demangle_tried says whether. */
    char *(*demangle)(const char *, char *, size_t *, int *);
    bool demangle_tried;
};

gpufl__symbolizer *gpufl__symbolizer_new(void) { return calloc(1, sizeof(gpufl__symbolizer)); }

void gpufl__symbolizer_free(gpufl__symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
#ifdef GPUFL_HAVE_LIBDW
        if (s->modules[i].dwfl)
            dwfl_end(s->modules[i].dwfl);
#endif
        free(s->modules[i].path);
    }
    free(s->modules);
    free(s);
}

bool gpufl__symbolizer_available(void)
{
#ifdef GPUFL_HAVE_LIBDW
    return true;
#else
    return false;
#endif
}

#ifdef GPUFL_HAVE_LIBDW

static void copy_str(char *dst, size_t len, const char *src) { snprintf(dst, len, "%s", src ? src : ""); }

static void demangle_into(gpufl__symbolizer *s, const char *name, char *dst, size_t len)
{
    if (strncmp(name, "_Z", 2) != 0) {
        copy_str(dst, len, name);
        return;
    }
    if (!s->demangle_tried) {
        s->demangle_tried = true;
        void *fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (!fn) {
            void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            fn = lib ? dlsym(lib, "__cxa_demangle") : NULL;
        }
        /* POSIX: a function pointer round-trips through dlsym's void *. */
        memcpy(&s->demangle, &fn, sizeof fn);
    }
    int status = -1;
    char *out = s->demangle ? s->demangle(name, NULL, NULL, &status) : NULL;
    copy_str(dst, len, status == 0 && out ? out : name);
    free(out);
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* The cached module for path, opening it on first use; NULL only when out
 * of memory. A file that cannot be opened is cached as such (dwfl NULL). */
static module_entry *module_for(gpufl__symbolizer *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->modules[i].path, path))
            return &s->modules[i];
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        module_entry *m = realloc(s->modules, cap * sizeof *m);
        if (!m)
            return NULL;
        s->modules = m;
        s->cap = cap;
    }
    module_entry *e = &s->modules[s->n];
    memset(e, 0, sizeof *e);
    e->path = strdup(path);
    if (!e->path)
        return NULL;
    s->n++;
    e->dwfl = dwfl_begin(&callbacks);
    if (!e->dwfl)
        return e;
    dwfl_report_begin(e->dwfl);
    const char *slash = strrchr(path, '/');
    /* The path comes from the session: a FIFO there would block libdwfl's
     * own open() for ever. On success libdwfl owns the descriptor. */
    char why[128];
    int fd = gpufl__open_regular(path, why, sizeof why);
    e->mod = fd >= 0 ? dwfl_report_elf(e->dwfl, slash ? slash + 1 : path, path, fd, 0, false) : NULL;
    if (fd >= 0 && !e->mod)
        close(fd);
    dwfl_report_end(e->dwfl, NULL, NULL);
    if (!e->mod) {
        dwfl_end(e->dwfl);
        e->dwfl = NULL;
    }
    return e;
}

static void set_file(gpufl__symbol *out, const char *dir, const char *file)
{
    /* relative names are relative to the compilation directory */
    if (file[0] != '/' && dir && dir[0])
        snprintf(out->file, sizeof out->file, "%s/%s", dir, file);
    else
        copy_str(out->file, sizeof out->file, file);
}

/* File and line through libdwfl's index of compilation units. Returns 0
 * when found. */
static int dwfl_line_of(Dwfl_Module *mod, uint64_t address, gpufl__symbol *out)
{
    Dwfl_Line *line = dwfl_module_getsrc(mod, address);
    int lineno = 0, col = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL) : NULL;
    if (!file || lineno <= 0)
        return -1;
    set_file(out, dwfl_line_comp_dir(line), file);
    out->line = (uint32_t)lineno;
    out->column = col > 0 ? (uint32_t)col : 0;
    return 0;
}

/* The same by walking the compilation units: that index needs
 * .debug_aranges, which clang does not emit by default. */
static void cu_line_of(Dwfl_Module *mod, uint64_t address, gpufl__symbol *out)
{
    Dwarf_Addr bias = 0;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL;) {
        if (dwarf_haspc(cu, address - bias) <= 0)
            continue;
        Dwarf_Line *line = dwarf_getsrc_die(cu, address - bias);
        int lineno = 0, col = 0;
        const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
        if (!file || dwarf_lineno(line, &lineno) != 0 || lineno <= 0)
            return;
        Dwarf_Attribute attr;
        set_file(out, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)), file);
        out->line = (uint32_t)lineno;
        if (dwarf_linecol(line, &col) == 0 && col > 0)
            out->column = (uint32_t)col;
        return;
    }
}

int gpufl__symbolize(gpufl__symbolizer *s, const char *module, uint64_t address, gpufl__symbol *out)
{
    memset(out, 0, sizeof *out);
    if (!module || !module[0]) {
        out->status = GFL_SYM_UNKNOWN_MODULE;
        return GPUFL_ENOTFOUND;
    }
    module_entry *m = module_for(s, module);
    if (!m || !m->dwfl) {
        out->status = GFL_SYM_NO_MODULE;
        return GPUFL_ENOTFOUND;
    }
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(m->mod, address, &off, &sym, NULL, NULL, NULL);
    if (dwfl_line_of(m->mod, address, out) != 0)
        cu_line_of(m->mod, address, out);
    if (!name || !name[0]) {
        out->status = GFL_SYM_NO_SYMBOL;
        return GPUFL_ENOTFOUND;
    }
    demangle_into(s, name, out->function, sizeof out->function);
    char *at = strchr(out->function, '@'); /* a symbol version: __libc_start_main@@GLIBC_2.34 */
    if (at && at != out->function)
        *at = '\0';
    out->function_offset = off;
    out->status = GFL_SYM_OK;
    return 0;
}

#else /* no libdw */

int gpufl__symbolize(gpufl__symbolizer *s, const char *module, uint64_t address, gpufl__symbol *out)
{
    (void)s;
    (void)address;
    memset(out, 0, sizeof *out);
    out->status = module && module[0] ? GFL_SYM_UNAVAILABLE : GFL_SYM_UNKNOWN_MODULE;
    return module && module[0] ? GPUFL_EUNSUPPORTED : GPUFL_ENOTFOUND;
}

#endif

gpufl__sym_status gpufl__symbolize_frame(gpufl__symbolizer *s, const char *module, uint64_t offset, bool return_address,
                                         char *buf, size_t len)
{
    gpufl__symbol sym;
    uint64_t pc = return_address && offset ? offset - 1 : offset;
    gpufl__symbolize(s, module, pc, &sym);
    if (sym.status == GFL_SYM_OK && sym.file[0]) {
        snprintf(buf, len, "%s at %s:%u", sym.function, sym.file, sym.line);
    } else if (sym.status == GFL_SYM_OK) {
        const char *slash = strrchr(module, '/');
        snprintf(buf, len, "%s+0x%llx in %s", sym.function, (unsigned long long)(sym.function_offset + (offset - pc)),
                 slash ? slash + 1 : module);
    } else if (sym.status == GFL_SYM_UNKNOWN_MODULE) {
        snprintf(buf, len, "?+0x%llx", (unsigned long long)offset);
    } else {
        snprintf(buf, len, "%s+0x%llx", module, (unsigned long long)offset);
    }
    return sym.status;
}
