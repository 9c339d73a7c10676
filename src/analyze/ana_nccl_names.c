/*
 * NCCL's kernel names (ana_nccl.h): which kernels are NCCL's and what their
 * names say. The forms, by NCCL version, are those its generators write
 * (src/device/generate.py from 2.19, src/device/symmetric/generate.py from
 * 2.27, the NCCL_KERN_NAME macros before): see ana_nccl.h. A name is read
 * once per launch configuration, not per kernel, so plain string scans do.
 *
 * Threads: any; no state.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_nccl.h"

static const char *const coll_names[GFL_NCCL_COLL_COUNT] = {
    "", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "SendRecv", "Send", "Recv", "Other"};
static const char *const algo_names[GFL_NCCL_ALGO_COUNT] = {"",     "Ring",     "Tree", "CollNetDirect", "CollNetChain",
                                                            "NVLS", "NVLSTree", "PAT",  "CollNet",       "Symmetric"};
static const char *const proto_names[GFL_NCCL_PROTO_COUNT] = {"", "LL", "LL128", "Simple"};

const char *gpufl__nccl_coll_name(unsigned coll) { return coll < GFL_NCCL_COLL_COUNT ? coll_names[coll] : ""; }
const char *gpufl__nccl_algo_name(unsigned algo) { return algo < GFL_NCCL_ALGO_COUNT ? algo_names[algo] : ""; }
const char *gpufl__nccl_proto_name(unsigned proto) { return proto < GFL_NCCL_PROTO_COUNT ? proto_names[proto] : ""; }

typedef struct word {
    const char *s;
    uint8_t v;
} word;

/* The collectives as the names spell them (CamelCase in every form). */
static const word colls[] = {{"AllReduce", GFL_NCCL_ALL_REDUCE}, {"AllGatherV", GFL_NCCL_ALL_GATHER},
                             {"AllGather", GFL_NCCL_ALL_GATHER}, {"ReduceScatter", GFL_NCCL_REDUCE_SCATTER},
                             {"Reduce", GFL_NCCL_REDUCE},        {"Broadcast", GFL_NCCL_BROADCAST},
                             {"SendRecv", GFL_NCCL_SEND_RECV},   {NULL, 0}};

/* Algorithms as 2.8 and later spell them; longer first where one is a prefix of another. */
static const word algos[] = {{"COLLNET_DIRECT", GFL_NCCL_ALGO_COLLNET_DIRECT},
                             {"COLLNET_CHAIN", GFL_NCCL_ALGO_COLLNET_CHAIN},
                             {"COLLNET", GFL_NCCL_ALGO_COLLNET},
                             {"NVLS_TREE", GFL_NCCL_ALGO_NVLS_TREE},
                             {"NVLS", GFL_NCCL_ALGO_NVLS},
                             {"RING", GFL_NCCL_ALGO_RING},
                             {"TREE", GFL_NCCL_ALGO_TREE},
                             {"PAT", GFL_NCCL_ALGO_PAT},
                             {NULL, 0}};

/* ... and as 2.7 and before do, inside the kernel's name. */
static const word legacy_algos[] = {
    {"Ring", GFL_NCCL_ALGO_RING}, {"Tree", GFL_NCCL_ALGO_TREE}, {"CollNet", GFL_NCCL_ALGO_COLLNET}, {NULL, 0}};

static const word protos[] = {
    {"LL128", GFL_NCCL_PROTO_LL128}, {"LL", GFL_NCCL_PROTO_LL}, {"SIMPLE", GFL_NCCL_PROTO_SIMPLE}, {NULL, 0}};

/* The C types of 2.8-2.18's names in NCCL's short forms (those of 2.19's names). */
static const char *const ctypes[][2] = {{"int8_t", "i8"},
                                        {"uint8_t", "u8"},
                                        {"int32_t", "i32"},
                                        {"uint32_t", "u32"},
                                        {"int64_t", "i64"},
                                        {"uint64_t", "u64"},
                                        {"half", "f16"},
                                        {"float", "f32"},
                                        {"double", "f64"},
                                        {"__nv_bfloat16", "bf16"},
                                        {"__nv_fp8_e4m3", "f8e4m3"},
                                        {"__nv_fp8_e5m2", "f8e5m2"},
                                        {NULL, NULL}};

static bool is_reduction(unsigned coll)
{
    return coll == GFL_NCCL_ALL_REDUCE || coll == GFL_NCCL_REDUCE || coll == GFL_NCCL_REDUCE_SCATTER;
}

/* The word of `words` that s[0..n) is exactly; 0 when none. */
static uint8_t word_exact(const word *words, const char *s, size_t n)
{
    for (const word *w = words; w->s; w++)
        if (strlen(w->s) == n && !memcmp(w->s, s, n))
            return w->v;
    return 0;
}

/* The word of `words` that s starts with: its value, *len its length; 0 when none. */
static uint8_t word_prefix(const word *words, const char *s, size_t *len)
{
    for (const word *w = words; w->s; w++) {
        size_t n = strlen(w->s);
        if (!strncmp(s, w->s, n)) {
            *len = n;
            return w->v;
        }
    }
    return 0;
}

/* Copies s[0..n) into dst (cap bytes) when it fits, else leaves dst "". */
static void put(char *dst, size_t cap, const char *s, size_t n)
{
    if (n < cap) {
        memcpy(dst, s, n);
        dst[n] = '\0';
    }
}

static void put_ctype(char *dst, size_t cap, const char *s, size_t n)
{
    for (size_t i = 0; ctypes[i][0]; i++)
        if (strlen(ctypes[i][0]) == n && !memcmp(ctypes[i][0], s, n)) {
            put(dst, cap, ctypes[i][1], strlen(ctypes[i][1]));
            return;
        }
    put(dst, cap, s, n);
}

/* The length of the token at s: up to '_' or the end. */
static size_t token(const char *s)
{
    const char *u = strchr(s, '_');
    return u ? (size_t)(u - s) : strlen(s);
}

/* "<ALGO>_<PROTO>" (what follows in 2.19's names). */
static void algo_proto(const char *s, gpufl__nccl_kind *k)
{
    size_t n;
    k->algo = word_prefix(algos, s, &n);
    if (k->algo && s[n] == '_')
        k->proto = word_exact(protos, s + n + 1, strlen(s + n + 1));
}

/* 2.19 and later: ncclDevKernel_<Coll>[_<Redop>_<type>]_<ALGO>_<PROTO>, _SendRecv, _Generic. */
static void dev_kernel(const char *s, gpufl__nccl_kind *k)
{
    size_t n = token(s);
    k->coll = word_exact(colls, s, n);
    if (!k->coll) {
        k->coll = GFL_NCCL_OTHER; /* Generic: the kernel NCCL falls back to, which runs any function */
        return;
    }
    if (k->coll == GFL_NCCL_SEND_RECV || !s[n])
        return;
    s += n + 1;
    if (is_reduction(k->coll)) {
        size_t r = token(s);
        if (!s[r])
            return;
        put(k->redop, sizeof k->redop, s, r);
        s += r + 1;
        size_t d = token(s);
        if (!s[d])
            return;
        put(k->dtype, sizeof k->dtype, s, d);
        s += d + 1;
    }
    algo_proto(s, k);
    k->flags = (k->algo ? GFL_NCCL_FLAG_ALGO_SPECIALISED : 0) | (k->proto ? GFL_NCCL_FLAG_PROTO_SPECIALISED : 0) |
               (k->redop[0] ? GFL_NCCL_FLAG_REDOP_SPECIALISED : 0);
}

/* 2.8-2.18: ncclKernel_<Coll>_<ALGO>_<PROTO>_<Redop>_<ctype>, the C type possibly holding '_'. */
static void kernel_2_8(const char *s, gpufl__nccl_kind *k)
{
    size_t n = token(s);
    k->coll = word_exact(colls, s, n);
    if (!k->coll) {
        k->coll = GFL_NCCL_OTHER;
        return;
    }
    if (k->coll == GFL_NCCL_SEND_RECV || !s[n])
        return; /* its RING_SIMPLE_Sum_int8_t is a fixed placeholder: point-to-point has no algorithm */
    s += n + 1;
    k->algo = word_prefix(algos, s, &n);
    if (!k->algo || s[n] != '_')
        return;
    s += n + 1;
    k->proto = word_prefix(protos, s, &n);
    k->flags = k->proto ? GFL_NCCL_FLAG_PROTO_SPECIALISED : 0;
    if (!k->proto || s[n] != '_' || !is_reduction(k->coll))
        return; /* a gather's or broadcast's Sum_int8_t is a placeholder too */
    s += n + 1;
    size_t r = token(s);
    if (!s[r])
        return;
    put(k->redop, sizeof k->redop, s, r);
    k->flags |= GFL_NCCL_FLAG_REDOP_SPECIALISED;
    put_ctype(k->dtype, sizeof k->dtype, s + r + 1, strlen(s + r + 1));
}

/* 2.27 and later: ncclSym[k]DevKernel_<Coll>_<algo>[_<red>_<type>]: the symmetric-memory kernels, whose
 * reduction and type are real (one kernel each) and whose algorithms are their own. */
static void sym_kernel(const char *s, gpufl__nccl_kind *k)
{
    size_t n = token(s);
    k->coll = word_exact(colls, s, n);
    if (!k->coll) {
        k->coll = GFL_NCCL_OTHER;
        return;
    }
    k->algo = GFL_NCCL_ALGO_SYMMETRIC;
    if (!is_reduction(k->coll))
        return;
    const char *ty = strrchr(s, '_');
    if (!ty || ty <= s + n)
        return;
    const char *red = ty - 1;
    while (red > s + n && *red != '_')
        red--;
    if (red <= s + n)
        return;
    put(k->redop, sizeof k->redop, red + 1, (size_t)(ty - red - 1));
    put(k->dtype, sizeof k->dtype, ty + 1, strlen(ty + 1));
}

/* 2.7 and before: nccl<Coll>[Ring|Tree|CollNet][LL|LL128]Kernel_<op>_<type>. False when s is not one. */
static bool kernel_2_7(const char *s, gpufl__nccl_kind *k)
{
    const char *kern = strstr(s, "Kernel_");
    if (!kern)
        return false;
    size_t n;
    uint8_t coll = word_prefix(colls, s, &n);
    if (!coll)
        return false;
    const char *p = s + n;
    size_t m = 0;
    uint8_t algo = word_prefix(legacy_algos, p, &m);
    p += m;
    m = 0;
    uint8_t proto = word_prefix(protos, p, &m);
    p += m;
    if (p != kern)
        return false;
    k->coll = coll;
    k->algo = coll == GFL_NCCL_SEND_RECV ? 0 : algo;
    k->proto = coll == GFL_NCCL_SEND_RECV ? 0 : proto;
    k->flags = k->proto ? GFL_NCCL_FLAG_PROTO_SPECIALISED : 0;
    const char *op = kern + strlen("Kernel_");
    size_t r = token(op);
    if (is_reduction(coll) && op[r]) {
        put(k->redop, sizeof k->redop, op, r);
        k->flags |= GFL_NCCL_FLAG_REDOP_SPECIALISED;
        put(k->dtype, sizeof k->dtype, op + r + 1, strlen(op + r + 1));
    }
    return true;
}

/* The kernel's own identifier out of a demangled or mangled name, into buf; false when there is none. */
static bool identifier(const char *name, char *buf, size_t cap)
{
    const char *s = name;
    size_t n;
    if (s[0] == '_' && s[1] == 'Z') {
        /* A mangled global function: _Z<length><identifier><parameters>. */
        char *end;
        unsigned long len = strtoul(s + 2, &end, 10);
        if (end == s + 2 || len == 0 || len >= cap || strnlen(end, len) < len)
            return false;
        s = end;
        n = len;
    } else {
        if (!strncmp(s, "void ", 5))
            s += 5;
        n = strcspn(s, "(< ");
        if (n == 0 || n >= cap)
            return false;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

static bool starts(const char *s, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0)
        return false;
    *rest = s + n;
    return true;
}

bool gpufl__nccl_classify(const char *kernel_name, gpufl__nccl_kind *out)
{
    memset(out, 0, sizeof *out);
    char id[256];
    if (!kernel_name || !identifier(kernel_name, id, sizeof id) || strncmp(id, "nccl", 4) != 0)
        return false;
    const char *rest;
    if (starts(id, "ncclDevKernel_", &rest))
        dev_kernel(rest, out);
    else if (starts(id, "ncclKernel_", &rest))
        kernel_2_8(rest, out);
    else if (starts(id, "ncclSymkDevKernel_", &rest) || starts(id, "ncclSymDevKernel_", &rest))
        sym_kernel(rest, out);
    else if (!kernel_2_7(id + 4, out)) {
        memset(out, 0, sizeof *out);
        return false;
    }
    return true;
}

unsigned gpufl__nccl_coll_of_api(const char *s)
{
    /* The NVTX ranges NCCL pushes around its API calls are named by the function (__func__). */
    static const word api[] = {{"ncclAllReduce", GFL_NCCL_ALL_REDUCE},
                               {"ncclAllGather", GFL_NCCL_ALL_GATHER},
                               {"ncclReduceScatter", GFL_NCCL_REDUCE_SCATTER},
                               {"ncclBroadcast", GFL_NCCL_BROADCAST},
                               {"ncclReduce", GFL_NCCL_REDUCE},
                               {"ncclSend", GFL_NCCL_SEND},
                               {"ncclRecv", GFL_NCCL_RECV},
                               {NULL, 0}};
    if (!s || strncmp(s, "nccl", 4) != 0)
        return GFL_NCCL_NONE;
    return word_exact(api, s, strlen(s));
}
