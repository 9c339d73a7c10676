/*
 * read/source_text.c: a source line's text from the session's sources/
 * copy, else from the file while its size and mtime are what the index
 * recorded, else (no sources/ at all) from the file as it is now; never
 * from a stored name that would leave sources/, never a FIFO.
 *
 * Why: the reports print this text beside file:line, and a wrong line (a
 * file edited since the session) would point at the wrong code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_util.h"
#include "read/source_text.h"

static char *dir;
static char session[4200], file[4200], sources[4300];

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp("source_text");
    snprintf(session, sizeof session, "%s/session", dir);
    snprintf(sources, sizeof sources, "%s/sources", session);
    snprintf(file, sizeof file, "%s/k.cu", dir);
    mkdir(session, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(dir);
    free(dir);
    return 0;
}

/* sources/index.json naming file as stored (NULL: not copied) with the
 * file's current size and mtime, or size + 1 when `stale`. */
static void write_index(const char *stored, int stale)
{
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    mkdir(sources, 0755);
    char text[10000], at[4400];
    snprintf(text, sizeof text,
             "{\"version\":1,\"files\":[{\"path\":\"%s\",\"size\":%lld,\"mtime_ns\":%lld,\"stored\":%s%s%s,"
             "\"skipped\":null}]}",
             file, (long long)st.st_size + stale, (long long)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
             stored ? "\"" : "", stored ? stored : "null", stored ? "\"" : "");
    snprintf(at, sizeof at, "%s/index.json", sources);
    tu_write_file(at, text);
}

static void no_sources_reads_the_file_as_it_is_now(void **state)
{
    (void)state;
    tu_write_file(file, "one\n  two\r\nthree");
    char buf[64];
    assert_int_equal(gpufl__source_line_text(session, file, 2, buf, sizeof buf), GPUFL__SOURCE_NOW);
    assert_string_equal(buf, "  two");
    assert_int_equal(gpufl__source_line_text(session, file, 3, buf, sizeof buf), GPUFL__SOURCE_NOW);
    assert_string_equal(buf, "three"); /* a last line without its end */
    assert_int_equal(gpufl__source_line_text(session, file, 4, buf, sizeof buf), GPUFL__SOURCE_NONE);
    assert_string_equal(buf, "");
    assert_int_equal(gpufl__source_line_text(session, file, 0, buf, sizeof buf), GPUFL__SOURCE_NONE);
    char small[4];
    assert_int_equal(gpufl__source_line_text(session, file, 1, small, sizeof small), GPUFL__SOURCE_NOW);
    assert_string_equal(small, "one");
    assert_int_equal(gpufl__source_line_text(session, file, 3, small, 3), GPUFL__SOURCE_NOW);
    assert_string_equal(small, "th"); /* cut to len - 1 */
    /* a file in the session names the session too (trace.gflt) */
    char gflt[4400];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", session);
    assert_int_equal(gpufl__source_line_text(gflt, file, 1, buf, sizeof buf), GPUFL__SOURCE_NOW);
    tu_rm_rf(sources);
}

static void the_copy_wins_and_outlives_the_file(void **state)
{
    (void)state;
    tu_write_file(file, "new 1\nnew 2\n");
    write_index("0001-k.cu", 0);
    char at[4400], buf[64];
    snprintf(at, sizeof at, "%s/0001-k.cu", sources);
    tu_write_file(at, "old 1\nold 2\n");
    assert_int_equal(gpufl__source_line_text(session, file, 2, buf, sizeof buf), GPUFL__SOURCE_COPY);
    assert_string_equal(buf, "old 2");
    unlink(file);
    assert_int_equal(gpufl__source_line_text(session, file, 1, buf, sizeof buf), GPUFL__SOURCE_COPY);
    assert_string_equal(buf, "old 1");
    /* a path the index does not list has no text, even where it exists */
    char other[4400];
    snprintf(other, sizeof other, "%s/other.cu", dir);
    tu_write_file(other, "x\n");
    assert_int_equal(gpufl__source_line_text(session, other, 1, buf, sizeof buf), GPUFL__SOURCE_NONE);
    tu_rm_rf(sources);
}

static void uncopied_file_only_while_unchanged(void **state)
{
    (void)state;
    tu_write_file(file, "a\nb\n");
    write_index(NULL, 0);
    char buf[64];
    assert_int_equal(gpufl__source_line_text(session, file, 2, buf, sizeof buf), GPUFL__SOURCE_UNCHANGED);
    assert_string_equal(buf, "b");
    write_index(NULL, 1); /* the file's size differs from the recorded one */
    assert_int_equal(gpufl__source_line_text(session, file, 2, buf, sizeof buf), GPUFL__SOURCE_NONE);
    assert_string_equal(buf, "");
    tu_rm_rf(sources);
}

static void hostile_stored_names_and_fifos_are_not_read(void **state)
{
    (void)state;
    tu_write_file(file, "a\nb\n");
    char outside[4400], buf[64];
    snprintf(outside, sizeof outside, "%s/escape", dir);
    tu_write_file(outside, "secret\n");
    write_index("../../escape", 1); /* stale too, so the file itself is no fallback */
    assert_int_equal(gpufl__source_line_text(session, file, 1, buf, sizeof buf), GPUFL__SOURCE_NONE);
    write_index(".hidden", 1);
    assert_int_equal(gpufl__source_line_text(session, file, 1, buf, sizeof buf), GPUFL__SOURCE_NONE);
    tu_rm_rf(sources);
    /* no sources/: a FIFO named by line info is never opened for reading */
    char fifo[4400];
    snprintf(fifo, sizeof fifo, "%s/fifo.cu", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(gpufl__source_line_text(session, fifo, 1, buf, sizeof buf), GPUFL__SOURCE_NONE);
    /* a corrupt index gives nothing rather than a guess */
    mkdir(sources, 0755);
    char at[4400];
    snprintf(at, sizeof at, "%s/index.json", sources);
    tu_write_file(at, "{not json");
    assert_int_equal(gpufl__source_line_text(session, file, 1, buf, sizeof buf), GPUFL__SOURCE_NONE);
    tu_rm_rf(sources);
}

static void a_cache_reads_many_lines(void **state)
{
    (void)state;
    tu_write_file(file, "l1\nl2\nl3\n");
    gpufl__source_cache *c = gpufl__source_cache_new(session);
    assert_non_null(c);
    char buf[16];
    assert_int_equal(gpufl__source_cache_line(c, file, 3, buf, sizeof buf), GPUFL__SOURCE_NOW);
    assert_string_equal(buf, "l3");
    tu_write_file(file, "changed\n"); /* read once: the cache keeps what it read */
    assert_int_equal(gpufl__source_cache_line(c, file, 1, buf, sizeof buf), GPUFL__SOURCE_NOW);
    assert_string_equal(buf, "l1");
    assert_int_equal(gpufl__source_cache_line(c, "/no/such/file.cu", 1, buf, sizeof buf), GPUFL__SOURCE_NONE);
    gpufl__source_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_sources_reads_the_file_as_it_is_now),
        cmocka_unit_test(the_copy_wins_and_outlives_the_file),
        cmocka_unit_test(uncopied_file_only_while_unchanged),
        cmocka_unit_test(hostile_stored_names_and_fifos_are_not_read),
        cmocka_unit_test(a_cache_reads_many_lines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
