/*
 * Symbols for recorded code addresses: (module path, offset) -> function
 * name (demangled) and, when the module has debug info, source file and
 * line. Used when reading a session (gpufl stacks, reports), never while
 * recording.
 *
 * Offsets are addresses in the module's ELF file (what the stack recorder
 * writes and what addr2line takes). Modules are opened once and cached, with
 * elfutils libdw (separate debug info found the standard ways: build-id
 * under /usr/lib/debug, .gnu_debuglink). A build without libdw, a module
 * file that is gone, and a stripped module all degrade to "module+0xoffset".
 *
 * Threads: one symbolizer per thread (it caches without locks).
 * Sizes: tens of modules, thousands of frames; a module costs its symbol
 * table and line tables in memory while the symbolizer lives.
 */
#ifndef GPUFL_READ_SYMBOLIZE_H
#define GPUFL_READ_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gpufl__sym_status {
    GFL_SYM_OK = 0,             /* function found; file and line when debug info has them */
    GFL_SYM_NO_SYMBOL = 1,      /* the module was read, but no symbol covers the address (stripped) */
    GFL_SYM_NO_MODULE = 2,      /* the module file is missing, unreadable or not ELF */
    GFL_SYM_UNKNOWN_MODULE = 3, /* no module was recorded (code outside any file, e.g. JIT) */
    GFL_SYM_UNAVAILABLE = 4,    /* this build has no libdw */
} gpufl__sym_status;

typedef struct gpufl__symbol {
    gpufl__sym_status status;
    char function[1024];      /* demangled when it is a C++ name; "" unless GFL_SYM_OK */
    uint64_t function_offset; /* bytes from the function's start */
    char file[1024];          /* source file, "" when unknown */
    uint32_t line;            /* 0 when unknown */
    uint32_t column;          /* 0 when unknown */
} gpufl__symbol;

typedef struct gpufl__symbolizer gpufl__symbolizer;

/* A new symbolizer, or NULL when out of memory. */
gpufl__symbolizer *gpufl__symbolizer_new(void);
void gpufl__symbolizer_free(gpufl__symbolizer *s);

/* Whether this build can symbolize at all (it has libdw). */
bool gpufl__symbolizer_available(void);

/* Symbolizes address `address` of module `module` (a path; NULL or "" for
 * an unknown module). Fills *out in every case: out->status says how far it
 * got. Returns 0 when a function was found, GPUFL_ENOTFOUND when the module
 * or a symbol was not, GPUFL_EUNSUPPORTED without libdw. */
int gpufl__symbolize(gpufl__symbolizer *s, const char *module, uint64_t address, gpufl__symbol *out);

/* One recorded stack frame as text, for the CLI and reports:
 *     "launch_gemm(int) at /src/app.cc:42"      with debug info
 *     "cudaLaunchKernel+0x1a in libcudart.so.12" symbol only
 *     "/usr/lib/libfoo.so+0x1234"               nothing better known
 *     "?+0x7f3a1c20"                            no module (JIT code)
 * Recorded stack frames are return addresses: with return_address set, the
 * line looked up is the call's (offset - 1), while the text keeps offset.
 * Writes at most len bytes including the NUL; returns the symbol's status. */
gpufl__sym_status gpufl__symbolize_frame(gpufl__symbolizer *s, const char *module, uint64_t offset, bool return_address,
                                         char *buf, size_t len);

#endif /* GPUFL_READ_SYMBOLIZE_H */
