/*
 * Storage limits through the real library: log rotation, the session disk
 * cap, the free-space floor, write failures (ENOSPC after a short write,
 * EIO, a failed fdatasync) and flush_logs_always.
 *
 * Why: these are the paths that decide what a user finds on disk when the
 * disk fills up or fails. Each case runs a whole session (gpufl_init with
 * small limits, scopes from the main thread into a ring big enough never to
 * drop, gpufl_shutdown) and checks the files line by line: every file is
 * whole lines, says why writing stopped, and accounts for every event as
 * either written or lost. Faults come from a copy of gpufl__os_real with a
 * few calls replaced (src/core/os.h); gpufl__os is restored after each case.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/os.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "sink/logfile.h"
#include "test_util.h"

#define RING_EVENTS (1u << 20)
#define KiB 1024ull
#define MiB (1024ull * KiB)

/* ---- the fake system calls ------------------------------------------------ */

#define MAX_FD 4096

static struct {
    _Atomic bool is_log[MAX_FD]; /* fd is one of the session's *.log files */
    _Atomic int scope_fd;        /* fd of scope.log, or -1 */
    _Atomic unsigned long log_writes, log_syncs, scope_writes, scope_syncs, statvfs_calls;
    _Atomic bool low_space; /* statvfs reports LOW_SPACE_BYTES free */

    /* write fault on scope.log: after fault_after bytes, a short write up to
     * that point (if fault_short) then -1 with fault_errno */
    bool write_fault;
    uint64_t fault_after;
    int fault_errno;
    bool fault_short, fault_persistent;
    /* fdatasync fault on scope.log: call number sync_fail_at fails with EIO */
    unsigned long sync_fail_at;

    _Atomic uint64_t scope_bytes; /* bytes write() put into scope.log */
    _Atomic uint64_t last_write_start;
    _Atomic bool fired;
    bool partial_done;
    _Atomic uint64_t fault_batch_start; /* scope.log size when the failing batch began */

    /* a file system of fs_cap bytes holding only the files under fs_root:
     * a write past it is cut short, then fails with ENOSPC */
    char fs_root[4096];
    uint64_t fs_cap;
    _Atomic bool in_fs[MAX_FD];
    _Atomic unsigned long enospc;
} fk;

#define LOW_SPACE_BYTES (1 * MiB)

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int fake_open(const char *path, int flags, mode_t mode)
{
    int fd = gpufl__os_real.open(path, flags, mode);
    if (fd >= 0 && fd < MAX_FD && fk.fs_cap)
        atomic_store(&fk.in_fs[fd], !strncmp(path, fk.fs_root, strlen(fk.fs_root)));
    if (fd >= 0 && fd < MAX_FD) {
        atomic_store(&fk.is_log[fd], ends_with(path, ".log"));
        if (ends_with(path, "/scope.log"))
            atomic_store(&fk.scope_fd, fd);
    }
    return fd;
}

static int fake_close(int fd)
{
    if (fd >= 0 && fd < MAX_FD) {
        atomic_store(&fk.is_log[fd], false);
        if (atomic_load(&fk.scope_fd) == fd)
            atomic_store(&fk.scope_fd, -1);
    }
    return gpufl__os_real.close(fd);
}

static ssize_t scope_write(int fd, const void *buf, size_t n)
{
    uint64_t have = atomic_load(&fk.scope_bytes);
    if (fk.write_fault) {
        if (atomic_load(&fk.fired)) {
            if (fk.fault_persistent) {
                errno = fk.fault_errno;
                return -1;
            }
        } else if (have + n > fk.fault_after) {
            if (fk.fault_short && !fk.partial_done && have < fk.fault_after) {
                /* the first half of the fault: a short write */
                atomic_store(&fk.fault_batch_start, have);
                fk.partial_done = true;
                ssize_t w = gpufl__os_real.write(fd, buf, (size_t)(fk.fault_after - have));
                if (w > 0)
                    atomic_store(&fk.scope_bytes, have + (uint64_t)w);
                return w;
            }
            if (!fk.partial_done)
                atomic_store(&fk.fault_batch_start, have);
            atomic_store(&fk.fired, true);
            errno = fk.fault_errno;
            return -1;
        }
    }
    ssize_t w = gpufl__os_real.write(fd, buf, n);
    if (w > 0) {
        atomic_store(&fk.last_write_start, have);
        atomic_store(&fk.scope_bytes, have + (uint64_t)w);
    }
    return w;
}

/* Bytes the files under dir (and its directories) take on the disk. */
static uint64_t bytes_under(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        /* whole 4 KiB pages, as tmpfs counts (and most disks, in blocks) */
        total += S_ISDIR(st.st_mode) ? bytes_under(path) : ((uint64_t)st.st_size + 4095) / 4096 * 4096;
    }
    closedir(d);
    return total;
}

static ssize_t fs_write(int fd, const void *buf, size_t n)
{
    /* the bytes that fit: what the file's last page has left, then whole
     * free pages */
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    uint64_t used = bytes_under(fk.fs_root);
    uint64_t in_page = (uint64_t)st.st_size % 4096 ? 4096 - (uint64_t)st.st_size % 4096 : 0;
    uint64_t room = in_page + (used < fk.fs_cap ? fk.fs_cap - used : 0);
    if (n > room) {
        atomic_fetch_add(&fk.enospc, 1);
        if (room == 0) {
            errno = ENOSPC;
            return -1;
        }
        n = (size_t)room;
    }
    return gpufl__os_real.write(fd, buf, n);
}

static ssize_t fake_write(int fd, const void *buf, size_t n)
{
    if (fd >= 0 && fd < MAX_FD && atomic_load(&fk.in_fs[fd]))
        return fs_write(fd, buf, n);
    if (fd >= 0 && fd < MAX_FD && atomic_load(&fk.is_log[fd]))
        atomic_fetch_add(&fk.log_writes, 1);
    if (fd >= 0 && fd == atomic_load(&fk.scope_fd)) {
        atomic_fetch_add(&fk.scope_writes, 1);
        return scope_write(fd, buf, n);
    }
    return gpufl__os_real.write(fd, buf, n);
}

static int fake_fdatasync(int fd)
{
    if (fd >= 0 && fd < MAX_FD && atomic_load(&fk.is_log[fd]))
        atomic_fetch_add(&fk.log_syncs, 1);
    if (fd >= 0 && fd == atomic_load(&fk.scope_fd)) {
        unsigned long k = atomic_fetch_add(&fk.scope_syncs, 1) + 1;
        if (fk.sync_fail_at && k == fk.sync_fail_at) {
            atomic_store(&fk.fault_batch_start, atomic_load(&fk.last_write_start));
            atomic_store(&fk.fired, true);
            errno = EIO;
            return -1;
        }
    }
    return gpufl__os_real.fdatasync(fd);
}

static int fake_statvfs(const char *path, struct statvfs *st)
{
    atomic_fetch_add(&fk.statvfs_calls, 1);
    int rc = gpufl__os_real.statvfs(path, st);
    if (rc == 0 && atomic_load(&fk.low_space)) {
        st->f_frsize = 4096;
        st->f_bsize = 4096;
        st->f_bavail = LOW_SPACE_BYTES / 4096;
        st->f_bfree = LOW_SPACE_BYTES / 4096;
    }
    return rc;
}

static gpufl__os_ops fake_ops;

static void install_fake(void)
{
    memset(&fk, 0, sizeof fk);
    atomic_store(&fk.scope_fd, -1);
    fake_ops = gpufl__os_real;
    fake_ops.open = fake_open;
    fake_ops.close = fake_close;
    fake_ops.write = fake_write;
    fake_ops.fdatasync = fake_fdatasync;
    fake_ops.statvfs = fake_statvfs;
    gpufl__os = &fake_ops;
}

/* The current case's log_path, removed by the teardown when a failed
 * assertion skipped the case's own cleanup. */
static char *current_log_path;

static char *new_log_path(const char *tag)
{
    current_log_path = tu_mkdtemp(tag);
    return current_log_path;
}

/* A tmpfs the current case mounted, unmounted by the teardown whatever
 * happened. */
static char *current_mount;

static int restore_os(void **state)
{
    (void)state;
    gpufl_shutdown(); /* harmless when a case already did */
    gpufl__os = &gpufl__os_real;
    if (current_mount) {
        tu_rm_rf(current_mount); /* the files, and then the mount point can go */
        umount(current_mount);
        rmdir(current_mount);
        current_mount = NULL;
    }
    if (current_log_path) {
        tu_rm_rf(current_log_path);
        free(current_log_path);
        current_log_path = NULL;
    }
    return 0;
}

/* ---- sessions and what they wrote ---------------------------------------- */

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void base_options(gpufl_options *o, const char *log_path)
{
    /* small sessions that still span many write() calls, as a long one does */
    gpufl__logfile_write_bytes = 128 * KiB;
    gpufl_options_init(o);
    o->log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o->app_name = "storage_limits";
    o->log_path = log_path;
    o->ring_events = RING_EVENTS;
    o->min_free_bytes = 0; /* only the free-space case tests the floor */
}

/* The scope events the test produced, in order (one thread, so the file
 * must hold them in this order). */
typedef struct produced {
    char *is_end; /* 0 = scope_begin, 1 = scope_end */
    uint64_t *id;
    size_t n, cap;
} produced;

static void note(produced *p, bool is_end, uint64_t id)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4096;
        p->is_end = realloc(p->is_end, p->cap);
        p->id = realloc(p->id, p->cap * sizeof *p->id);
        assert_non_null(p->is_end);
        assert_non_null(p->id);
    }
    p->is_end[p->n] = is_end;
    p->id[p->n++] = id;
}

static void produced_free(produced *p)
{
    free(p->is_end);
    free(p->id);
    memset(p, 0, sizeof *p);
}

/* n iterations of an outer scope with one inner scope: 4 events each. */
static void produce(produced *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gpufl_scope outer = gpufl_scope_begin("storage_limits.outer_phase_with_a_longish_name");
        assert_int_not_equal(outer, 0);
        note(p, false, outer);
        gpufl_scope inner = gpufl_scope_begin("storage_limits.inner_step");
        assert_int_not_equal(inner, 0);
        note(p, false, inner);
        gpufl_scope_end(inner);
        note(p, true, inner);
        gpufl_scope_end(outer);
        note(p, true, outer);
    }
}

static const char *type_of(json_t *line) { return json_string_value(json_object_get(line, "type")); }

static bool is_scope_line(json_t *line)
{
    const char *t = type_of(line);
    return t && (!strcmp(t, "scope_begin") || !strcmp(t, "scope_end"));
}

static uint64_t u64(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_true(json_is_integer(v));
    return (uint64_t)json_integer_value(v);
}

/* Checks that the scope lines of f are exactly produced[0..k), in order,
 * and returns k. */
static size_t check_scope_prefix(const tu_ndjson *f, const produced *p)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (!is_scope_line(f->lines[i]))
            continue;
        assert_true(k < p->n);
        bool is_end = !strcmp(type_of(f->lines[i]), "scope_end");
        if (is_end != (bool)p->is_end[k] || u64(f->lines[i], "id") != p->id[k])
            fail_msg("scope line %zu is %s id %llu, expected %s id %llu", k, is_end ? "end" : "begin",
                     (unsigned long long)u64(f->lines[i], "id"), p->is_end[k] ? "end" : "begin",
                     (unsigned long long)p->id[k]);
        k++;
    }
    return k;
}

static const char *stop_reason(json_t *session)
{
    json_t *stopped = json_object_get(json_object_get(json_object_get(session, "summary"), "logs"), "stopped");
    return json_string_value(json_object_get(stopped, "reason"));
}

/* The log <dir>/<base>.log must start with its header and end with a
 * "log_stopped" line giving `reason` and then "session_end"; returns the session_end line's "lost"
 * (the whole file is loaded into *f for the caller, who frees it). */
static uint64_t check_stopped_tail(const char *dir, const char *base, const char *reason, tu_ndjson *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.log", dir, base);
    assert_int_equal(tu_ndjson_load(path, f), 0);
    assert_int_equal(f->tail_bytes, 0);
    assert_true(f->n >= 3);
    assert_string_equal(type_of(f->lines[0]), "session_start");
    json_t *stopped = f->lines[f->n - 2], *end = f->lines[f->n - 1];
    assert_string_equal(type_of(stopped), "log_stopped");
    assert_string_equal(json_string_value(json_object_get(stopped, "reason")), reason);
    assert_true(json_is_string(json_object_get(stopped, "detail")));
    assert_string_equal(type_of(end), "session_end");
    assert_int_equal(tu_count_type(f, "log_stopped"), 1);
    assert_int_equal(tu_count_type(f, "session_end"), 1);
    return u64(end, "lost");
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* Total bytes of every *.log in dir. */
static uint64_t logs_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ".log"))
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        total += file_size(path);
    }
    closedir(d);
    return total;
}

/* Byte offset of the first line of type `type` in a file, or its size. */
static uint64_t offset_of_type(const char *path, const char *type)
{
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    char needle[64];
    snprintf(needle, sizeof needle, "{\"type\":\"%s\"", type);
    uint64_t off = len;
    for (char *line = text; line < text + len;) {
        if (!strncmp(line, needle, strlen(needle))) {
            off = (uint64_t)(line - text);
            break;
        }
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        if (!nl)
            break;
        line = nl + 1;
    }
    free(text);
    return off;
}

static char *start_session(gpufl_options *o, const char *log_path)
{
    assert_true(gpufl_init(o));
    assert_true(gpufl_is_recording());
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    return dir;
}

static void finish(char *log_path, char *dir)
{
    gpufl_shutdown();
    gpufl__os = &gpufl__os_real;
    tu_rm_rf(log_path);
    free(log_path);
    current_log_path = NULL;
    free(dir);
}

/* ---- (a) rotation --------------------------------------------------------- */

/* Length of the last line (with its newline) of a file. */
static size_t last_line_len(const char *path)
{
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    assert_true(len > 0 && text[len - 1] == '\n');
    size_t start = len - 1;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    free(text);
    return len - start;
}

static void test_rotation(void **state)
{
    (void)state;
    const uint64_t rotate = 64 * KiB;
    char *log_path = new_log_path("rotate");
    gpufl_options o;
    base_options(&o, log_path);
    o.log_rotate_bytes = rotate;
    char *dir = start_session(&o, log_path);
    produced p = {0};
    produce(&p, 1000); /* 4000 scope lines, about 600 KB ... */
    sleep_ms(150);     /* ... written in several batches ... */
    produce(&p, 1000); /* ... and as many again */
    gpufl_shutdown();

    /* the rotated parts: scope.1.log .. scope.N.log */
    unsigned nrot = 0;
    uint64_t lines_in_files = 0;
    for (;; nrot++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/scope.%u.log", dir, nrot + 1);
        if (!tu_exists(path))
            break;
        tu_ndjson f;
        assert_int_equal(tu_ndjson_load(path, &f), 0);
        assert_int_equal(f.tail_bytes, 0);
        assert_true(f.n >= 2);
        assert_string_equal(type_of(f.lines[0]), "session_start");
        assert_string_equal(json_string_value(json_object_get(f.lines[0], "channel")), "scope");
        assert_int_equal(u64(f.lines[0], "part"), nrot);
        assert_int_equal(tu_count_type(&f, "session_start"), 1);
        assert_int_equal(tu_count_type(&f, "session_end"), 0);
        assert_true(is_scope_line(f.lines[f.n - 1]));
        /* rotated once it reached the limit, and not a line later */
        uint64_t size = file_size(path);
        assert_true(size >= rotate);
        assert_true(size - last_line_len(path) < rotate);
        lines_in_files += f.n;
        tu_ndjson_free(&f);
    }
    assert_true(nrot >= 5);

    char path[4200];
    snprintf(path, sizeof path, "%s/scope.log", dir);
    tu_ndjson f;
    assert_int_equal(tu_ndjson_load(path, &f), 0);
    assert_int_equal(f.tail_bytes, 0);
    assert_true(f.n >= 2);
    assert_string_equal(type_of(f.lines[0]), "session_start");
    assert_int_equal(u64(f.lines[0], "part"), nrot);
    json_t *end = f.lines[f.n - 1];
    assert_string_equal(type_of(end), "session_end");
    assert_int_equal(tu_count_type(&f, "session_end"), 1);
    assert_int_equal(tu_count_type(&f, "log_stopped"), 0);
    assert_true(file_size(path) - last_line_len(path) < rotate);
    lines_in_files += f.n;
    /* the writer's own count covers every part, the closing line excepted */
    assert_int_equal(u64(end, "lines"), lines_in_files - 1);
    assert_int_equal(u64(end, "lost"), 0);
    tu_ndjson_free(&f);

    /* every scope line exactly once, in the order produced */
    tu_ndjson all;
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &all), 0);
    assert_int_equal(tu_count_type(&all, "session_start"), nrot + 1);
    assert_int_equal(check_scope_prefix(&all, &p), p.n);
    assert_int_equal(p.n, 8000);
    tu_ndjson_free(&all);

    /* the small channels did not rotate */
    snprintf(path, sizeof path, "%s/device.1.log", dir);
    assert_false(tu_exists(path));
    snprintf(path, sizeof path, "%s/system.1.log", dir);
    assert_false(tu_exists(path));

    json_t *session = tu_session_json(dir);
    assert_null(stop_reason(session));
    json_decref(session);
    produced_free(&p);
    finish(log_path, dir);
}

/* ---- (b) disk cap --------------------------------------------------------- */

static void test_disk_cap(void **state)
{
    (void)state;
    const uint64_t cap = 1 * MiB;
    char *log_path = new_log_path("diskcap");
    gpufl_options o;
    base_options(&o, log_path);
    o.session_max_bytes = cap;
    char *dir = start_session(&o, log_path);
    produced p = {0};
    produce(&p, 4000); /* 16000 lines, about 2.4 MB: well past the cap */
    sleep_ms(300);     /* the collector reaches the cap and stops */
    assert_true(gpufl_is_recording());
    produce(&p, 500); /* after the stop: dropped, and harmless */
    gpufl_shutdown();
    assert_false(gpufl_is_recording());

    assert_true(logs_bytes(dir) <= cap);

    uint64_t lost_total = 0;
    const char *bases[] = {"device", "scope", "system"};
    for (int i = 0; i < 3; i++) {
        tu_ndjson f;
        uint64_t lost = check_stopped_tail(dir, bases[i], "disk_cap", &f);
        lost_total += lost;
        if (!strcmp(bases[i], "scope")) {
            size_t written = check_scope_prefix(&f, &p);
            assert_true(written > 0);
            assert_true(lost > 0);
            assert_int_equal(written + lost, p.n);
        }
        tu_ndjson_free(&f);
    }

    json_t *session = tu_session_json(dir);
    assert_string_equal(stop_reason(session), "disk_cap");
    json_t *dropped = json_object_get(json_object_get(session, "summary"), "dropped");
    assert_int_equal(u64(dropped, "disk_limit"), lost_total);
    assert_int_equal(u64(dropped, "ring_full"), 0);
    json_decref(session);
    produced_free(&p);
    finish(log_path, dir);
}

/* ---- (c) free-space floor ------------------------------------------------- */

/* Free space is short from the first check: nothing is written at all, but
 * every log still says why. */
static void test_free_space_at_start(void **state)
{
    (void)state;
    char *log_path = new_log_path("freespace");
    gpufl_options o;
    base_options(&o, log_path);
    o.min_free_bytes = 64 * MiB;
    install_fake();
    atomic_store(&fk.low_space, true);
    char *dir = start_session(&o, log_path);
    produced p = {0};
    produce(&p, 200);
    sleep_ms(200);
    gpufl_shutdown();
    assert_true(atomic_load(&fk.statvfs_calls) >= 1);

    const char *bases[] = {"device", "scope", "system"};
    for (int i = 0; i < 3; i++) {
        tu_ndjson f;
        uint64_t lost = check_stopped_tail(dir, bases[i], "free_space", &f);
        json_t *stopped = f.lines[f.n - 2];
        assert_non_null(strstr(json_string_value(json_object_get(stopped, "detail")), "free space"));
        /* nothing else was written, but the file still says what it is */
        assert_int_equal(f.n, 3);
        assert_string_equal(type_of(f.lines[0]), "session_start");
        if (!strcmp(bases[i], "scope")) {
            assert_int_equal(check_scope_prefix(&f, &p), 0);
            assert_int_equal(lost, p.n);
        }
        tu_ndjson_free(&f);
    }
    json_t *session = tu_session_json(dir);
    assert_string_equal(stop_reason(session), "free_space");
    json_decref(session);
    produced_free(&p);
    finish(log_path, dir);
}

static bool wait_for_text(const char *path, const char *needle, unsigned timeout_ms)
{
    for (unsigned waited = 0;; waited += 10) {
        char *text = tu_read_file(path, NULL);
        bool found = text && strstr(text, needle);
        free(text);
        if (found)
            return true;
        if (waited >= timeout_ms)
            return false;
        sleep_ms(10);
    }
}

/* Scope lines in a file now (it may be growing). */
static size_t scope_lines_in(const char *path)
{
    tu_ndjson f;
    if (tu_ndjson_load(path, &f) != 0) {
        tu_ndjson_free(&f);
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < f.n; i++)
        n += is_scope_line(f.lines[i]);
    tu_ndjson_free(&f);
    return n;
}

/* Free space runs short in the middle: what was written stays, what comes
 * after the next check (statvfs runs at most once a second) is lost and
 * counted. */
static void test_free_space_later(void **state)
{
    (void)state;
    char *log_path = new_log_path("freespace2");
    gpufl_options o;
    base_options(&o, log_path);
    o.min_free_bytes = 64 * MiB;
    install_fake();
    char *dir = start_session(&o, log_path);
    char scope_log[4200];
    snprintf(scope_log, sizeof scope_log, "%s/scope.log", dir);

    produced p = {0};
    produce(&p, 100);
    /* the first batch is on disk, with plenty of room ... */
    for (int i = 0; i < 500 && scope_lines_in(scope_log) < p.n; i++)
        sleep_ms(10);
    size_t n_before = p.n;
    assert_int_equal(scope_lines_in(scope_log), n_before);
    assert_true(atomic_load(&fk.statvfs_calls) >= 1);
    /* ... then the disk fills up */
    atomic_store(&fk.low_space, true);
    for (int i = 0; i < 400 && !wait_for_text(scope_log, "log_stopped", 0); i++) {
        produce(&p, 10);
        sleep_ms(10);
    }
    assert_true(wait_for_text(scope_log, "log_stopped", 0));
    gpufl_shutdown();

    tu_ndjson f;
    uint64_t lost = check_stopped_tail(dir, "scope", "free_space", &f);
    size_t written = check_scope_prefix(&f, &p);
    assert_true(written >= n_before);
    assert_true(lost > 0);
    assert_int_equal(written + lost, p.n);
    tu_ndjson_free(&f);
    json_t *session = tu_session_json(dir);
    assert_string_equal(stop_reason(session), "free_space");
    json_decref(session);
    produced_free(&p);
    finish(log_path, dir);
}

/* ---- (d) write failures --------------------------------------------------- */

typedef struct fault_case {
    const char *tag;
    int err;
    bool short_write, persistent;
    unsigned long sync_fail_at; /* 0: a write fault instead */
} fault_case;

static void run_fault(const fault_case *fc)
{
    char *log_path = new_log_path(fc->tag);
    gpufl_options o;
    base_options(&o, log_path);
    install_fake();
    if (fc->sync_fail_at) {
        o.flush_logs_always = true;
        fk.sync_fail_at = fc->sync_fail_at;
    } else {
        fk.write_fault = true;
        fk.fault_after = 200 * KiB;
        fk.fault_errno = fc->err;
        fk.fault_short = fc->short_write;
        fk.fault_persistent = fc->persistent;
    }
    char *dir = start_session(&o, log_path);
    char scope_log[4200];
    snprintf(scope_log, sizeof scope_log, "%s/scope.log", dir);
    produced p = {0};
    /* in slices, so that the file is written in many batches */
    for (int i = 0; i < 20; i++) {
        produce(&p, 100);
        sleep_ms(10);
    }
    gpufl_shutdown();
    assert_true(atomic_load(&fk.fired));
    uint64_t batch_start = atomic_load(&fk.fault_batch_start);
    assert_true(batch_start > 0);

    /* only whole lines, none torn, in every log */
    const char *bases[] = {"device", "scope", "system"};
    uint64_t lost_other = 0;
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.log", dir, bases[i]);
        tu_ndjson f;
        assert_int_equal(tu_ndjson_load(path, &f), 0);
        assert_int_equal(f.tail_bytes, 0);
        tu_ndjson_free(&f);
        if (strcmp(bases[i], "scope") != 0) {
            lost_other += check_stopped_tail(dir, bases[i], "io_error", &f);
            tu_ndjson_free(&f);
        }
    }

    tu_ndjson f;
    assert_int_equal(tu_ndjson_load(scope_log, &f), 0);
    size_t written = check_scope_prefix(&f, &p);
    assert_true(written > 0);
    assert_true(written < p.n);
    uint64_t lost_scope;
    if (fc->persistent) {
        /* nothing more could be written: the file ends where the failed batch began */
        assert_int_equal(file_size(scope_log), batch_start);
        assert_int_equal(tu_count_type(&f, "log_stopped"), 0);
        lost_scope = p.n - written;
    } else {
        tu_ndjson_free(&f);
        lost_scope = check_stopped_tail(dir, "scope", "io_error", &f);
        /* every batch written before the failure is there, the failed one is not */
        assert_int_equal(offset_of_type(scope_log, "log_stopped"), batch_start);
        assert_int_equal(written + lost_scope, p.n);
    }
    tu_ndjson_free(&f);

    json_t *session = tu_session_json(dir);
    assert_string_equal(stop_reason(session), "io_error");
    json_t *summary = json_object_get(session, "summary");
    const char *detail =
        json_string_value(json_object_get(json_object_get(json_object_get(summary, "logs"), "stopped"), "detail"));
    assert_non_null(detail);
    assert_non_null(strstr(detail, strerror(fc->sync_fail_at ? EIO : fc->err)));
    assert_int_equal(u64(json_object_get(summary, "dropped"), "disk_limit"), lost_scope + lost_other);
    json_decref(session);
    produced_free(&p);
    finish(log_path, dir);
}

static void test_enospc_short_write(void **state)
{
    (void)state;
    fault_case fc = {"enospc", ENOSPC, true, false, 0};
    run_fault(&fc);
}

static void test_enospc_short_write_persistent(void **state)
{
    (void)state;
    fault_case fc = {"enospc2", ENOSPC, true, true, 0};
    run_fault(&fc);
}

static void test_eio(void **state)
{
    (void)state;
    fault_case fc = {"eio", EIO, false, false, 0};
    run_fault(&fc);
}

static void test_eio_persistent(void **state)
{
    (void)state;
    fault_case fc = {"eio2", EIO, false, true, 0};
    run_fault(&fc);
}

/* fdatasync fails after the batch was written: the batch is not durable, so
 * it is counted lost and must not stay in the file as well. */
static void test_fdatasync_eio(void **state)
{
    (void)state;
    fault_case fc = {"synceio", EIO, false, false, 5};
    run_fault(&fc);
}

/* ---- (e) flush_logs_always ---------------------------------------------- */

static void run_durable(bool durable)
{
    char *log_path = new_log_path("durable");
    gpufl_options o;
    base_options(&o, log_path);
    o.flush_logs_always = durable;
    install_fake();
    char *dir = start_session(&o, log_path);
    char scope_log[4200];
    snprintf(scope_log, sizeof scope_log, "%s/scope.log", dir);
    produced p = {0};
    produce(&p, 250);
    sleep_ms(300);

    /* still recording, and every line is already in the file */
    assert_true(gpufl_is_recording());
    tu_ndjson f;
    assert_int_equal(tu_ndjson_load(scope_log, &f), 0);
    assert_int_equal(f.tail_bytes, 0);
    assert_int_equal(check_scope_prefix(&f, &p), p.n);
    assert_int_equal(tu_count_type(&f, "session_end"), 0);
    tu_ndjson_free(&f);
    unsigned long writes = atomic_load(&fk.scope_writes), syncs = atomic_load(&fk.scope_syncs);
    assert_true(writes >= 1);
    if (durable) {
        /* every write of a log is followed by fdatasync */
        assert_true(syncs >= writes);
        assert_true(atomic_load(&fk.log_syncs) >= atomic_load(&fk.log_writes));
    } else {
        assert_int_equal(atomic_load(&fk.log_syncs), 0);
    }

    gpufl_shutdown();
    assert_int_equal(tu_ndjson_load(scope_log, &f), 0);
    assert_int_equal(check_scope_prefix(&f, &p), p.n);
    assert_string_equal(type_of(f.lines[f.n - 1]), "session_end");
    tu_ndjson_free(&f);
    if (durable)
        assert_true(atomic_load(&fk.scope_syncs) >= atomic_load(&fk.scope_writes));
    else
        assert_int_equal(atomic_load(&fk.log_syncs), 0);
    produced_free(&p);
    finish(log_path, dir);
}

static void test_flush_logs_always(void **state)
{
    (void)state;
    run_durable(true);
}

static void test_buffered_without_fdatasync(void **state)
{
    (void)state;
    run_durable(false);
}

/* ---- final loss counts ------------------------------------------------------ */

/* Losses that happen after writing stopped are counted, but their "dropped"
 * events can no longer be written: every reader must still show the final
 * counts by reason, the ones session.json has. Scopes nested past the depth
 * limit after the cap was reached give a loss of a known reason
 * (scope_depth) whose "dropped" events can only be refused. */
static void run_final_totals(gpufl_log_format format)
{
    char *log_path = new_log_path("totals");
    gpufl_options o;
    base_options(&o, log_path);
    o.session_max_bytes = 1 * MiB; /* the smallest cap there is */
    o.log_format = format;
    char *dir = start_session(&o, log_path);
    produced p = {0};
    /* well past the cap: .gflt takes ~1 byte an event here (zstd), NDJSON ~150 */
    for (int i = 0; i < (format == GPUFL_LOG_GFLT ? 100 : 1); i++) {
        produce(&p, 8000);
        sleep_ms(format == GPUFL_LOG_GFLT ? 10 : 0); /* let the collector keep up */
    }
    sleep_ms(1500); /* the collector reaches the cap; .gflt chunks wait up to 1 s */
    gpufl_scope open[200];
    for (int i = 0; i < 200; i++)
        open[i] = gpufl_scope_begin("storage_limits.too_deep");
    for (int i = 200; i-- > 0;)
        gpufl_scope_end(open[i]);
    gpufl_shutdown();

    json_t *session = tu_session_json(dir);
    json_t *dropped = json_object_get(json_object_get(session, "summary"), "dropped");
    assert_true(u64(dropped, "scope_depth") > 0);
    assert_true(u64(dropped, "disk_limit") > 0);
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(dir, &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const char *reasons[] = {"ring_full",   "disk_limit", "stale", "scope_depth",
                             "intern_full", "bad_event",  "cupti", "out_of_session"};
    for (unsigned r = 0; r < sizeof reasons / sizeof *reasons; r++)
        if (info->dropped[r] != u64(dropped, reasons[r]))
            fail_msg("log_format %d: the reader says %llu %s, session.json %llu", (int)format,
                     (unsigned long long)info->dropped[r], reasons[r], (unsigned long long)u64(dropped, reasons[r]));
    gpufl_trace_close(t);
    json_decref(session);
    produced_free(&p);
    finish(log_path, dir);
}

static void test_final_totals_ndjson(void **state)
{
    (void)state;
    run_final_totals(GPUFL_LOG_NDJSON);
}

static void test_final_totals_gflt(void **state)
{
    (void)state;
    run_final_totals(GPUFL_LOG_GFLT);
}

static void test_final_totals_both(void **state)
{
    (void)state;
    run_final_totals(GPUFL_LOG_BOTH);
}

/* The NDJSON logs lack the device channel on purpose: trace.gflt is the
 * copy readers read, and its losses are the session's. */
static void test_final_totals_compact(void **state)
{
    (void)state;
    run_final_totals(GPUFL_LOG_COMPACT);
}

/* ---- a full disk while logs rotate ------------------------------------------ */

static void *produce_thread(void *arg)
{
    produced *p = arg;
    produce(p, 20000);
    return NULL;
}

/* The disk fills up (no cap, no floor) while 4 threads record and scope.log
 * rotates every 64 KiB: every log, the rotated parts' successors included,
 * must still say that writing stopped and end with session_end, and
 * session.json must say the session ended and why writing stopped. */
static void check_disk_full(const char *log_path, gpufl_log_format format)
{
    gpufl_options o;
    base_options(&o, log_path);
    o.log_rotate_bytes = 64 * KiB;
    o.ring_events = 8192;
    o.log_format = format;
    char *dir = start_session(&o, log_path);
    produced p[4];
    pthread_t th[4];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, produce_thread, &p[i]), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    gpufl_shutdown();

    json_t *session = tu_session_json(dir);
    assert_string_equal(json_string_value(json_object_get(session, "status")), "ended");
    assert_string_equal(stop_reason(session), "io_error");
    json_decref(session);
    const char *bases[] = {"device", "scope", "system"};
    /* compact writes no device.log */
    for (int i = format == GPUFL_LOG_COMPACT ? 1 : 0; format != GPUFL_LOG_GFLT && i < 3; i++) {
        tu_ndjson f;
        (void)check_stopped_tail(dir, bases[i], "io_error", &f);
        tu_ndjson_free(&f);
    }
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(dir, &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(gpufl_trace_string(t, info->stop_reason), "io_error");
    assert_true(info->end_ns > 0);
    gpufl_trace_close(t);
    char reserve[4200];
    snprintf(reserve, sizeof reserve, "%s/.gpufl-reserve", dir);
    assert_int_equal(access(reserve, F_OK), -1);
    for (int i = 0; i < 4; i++)
        produced_free(&p[i]);
    gpufl__os = &gpufl__os_real;
    free(dir);
}

/* Through the OS-call table: runs anywhere. */
static void run_disk_full_injected(gpufl_log_format format)
{
    char *log_path = new_log_path("diskfull");
    install_fake();
    snprintf(fk.fs_root, sizeof fk.fs_root, "%s", log_path);
    fk.fs_cap = 2 * MiB;
    check_disk_full(log_path, format);
    assert_true(atomic_load(&fk.enospc) > 0);
    tu_rm_rf(log_path);
    free(log_path);
    current_log_path = NULL;
}

static void test_disk_full_rotating(void **state)
{
    (void)state;
    run_disk_full_injected(GPUFL_LOG_NDJSON);
}

static void test_disk_full_rotating_both(void **state)
{
    (void)state;
    run_disk_full_injected(GPUFL_LOG_BOTH);
}

static void test_disk_full_rotating_compact(void **state)
{
    (void)state;
    run_disk_full_injected(GPUFL_LOG_COMPACT);
}

/* The same on a real 2 MiB tmpfs, where the kernel says ENOSPC: needs root
 * (CI runs as root) and is skipped, saying so, elsewhere. */
static void test_disk_full_tmpfs(void **state)
{
    (void)state;
    char *mnt = new_log_path("tmpfs");
    if (mount("gpufl-test", mnt, "tmpfs", 0, "size=2m") != 0) {
        print_message("skipped: cannot mount a 2 MiB tmpfs on %s (%s); "
                      "test_disk_full_rotating covers the same by fault injection\n",
                      mnt, strerror(errno));
        skip();
    }
    current_mount = mnt;
    check_disk_full(mnt, GPUFL_LOG_NDJSON);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rotation, restore_os),
        cmocka_unit_test_teardown(test_disk_cap, restore_os),
        cmocka_unit_test_teardown(test_free_space_at_start, restore_os),
        cmocka_unit_test_teardown(test_free_space_later, restore_os),
        cmocka_unit_test_teardown(test_enospc_short_write, restore_os),
        cmocka_unit_test_teardown(test_enospc_short_write_persistent, restore_os),
        cmocka_unit_test_teardown(test_eio, restore_os),
        cmocka_unit_test_teardown(test_eio_persistent, restore_os),
        cmocka_unit_test_teardown(test_fdatasync_eio, restore_os),
        cmocka_unit_test_teardown(test_flush_logs_always, restore_os),
        cmocka_unit_test_teardown(test_buffered_without_fdatasync, restore_os),
        cmocka_unit_test_teardown(test_final_totals_ndjson, restore_os),
        cmocka_unit_test_teardown(test_final_totals_gflt, restore_os),
        cmocka_unit_test_teardown(test_final_totals_both, restore_os),
        cmocka_unit_test_teardown(test_final_totals_compact, restore_os),
        cmocka_unit_test_teardown(test_disk_full_rotating, restore_os),
        cmocka_unit_test_teardown(test_disk_full_rotating_both, restore_os),
        cmocka_unit_test_teardown(test_disk_full_rotating_compact, restore_os),
        cmocka_unit_test_teardown(test_disk_full_tmpfs, restore_os),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
