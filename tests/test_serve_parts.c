/*
 * The parts of `gpufl serve` that need no database (src/serve): an upload
 * batch read into COPY rows with the project's NDJSON parser
 * (serve_batch.c), COPY's text escaping, gzip bodies under a cap
 * (serve_gunzip.c), and HTTP/1.1 requests read from a socket
 * (serve_http.c). The server over PostgreSQL is tested end to end by
 * the scripts in tests/serve/.
 *
 * Why: a batch line the server misreads is stored wrong for good, an
 * escape missed breaks the whole COPY (and with it the batch), a gzip
 * bomb or a head without end must cost a bounded amount of memory, and a
 * request cut mid-body must never reach the database.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "gpufl/gpufl.h"
#include "serve/serve_batch.h"
#include "serve/serve_gunzip.h"
#include "serve/serve_http.h"

/* ---- batches ---------------------------------------------------------------- */

static const char kernel[] = "{\"type\":\"kernel\",\"start_ns\":100,\"end_ns\":350,\"dur_ns\":250,\"device\":1,"
                             "\"context\":1,\"stream\":7,\"corr\":3,\"name\":\"gemm\\t<float>\",\"grid\":[1,1,1],"
                             "\"block\":[32,1,1],\"regs\":16,\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":0}";
static const char scope_end[] = "{\"type\":\"scope_end\",\"ts_ns\":900,\"tid\":5,\"id\":1,\"parent\":0,\"depth\":0,"
                                "\"name\":\"step\",\"begin_ns\":400,\"dur_ns\":500}";

/* The COPY row of line i (0-based) of b, as a string (static buffer). */
static const char *row(const gpufl__serve_batch *b, unsigned i)
{
    static char buf[4096];
    const char *p = (const char *)b->copy.p, *end = p + b->copy.len;
    for (; i && p < end; i--)
        p = memchr(p, '\n', (size_t)(end - p)) + 1;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    assert_non_null(nl);
    snprintf(buf, sizeof buf, "%.*s", (int)(nl - p), p);
    return buf;
}

static void test_batch_rows_and_rejects(void **state)
{
    (void)state;
    char body[4096];
    snprintf(body, sizeof body,
             "%s\n%s\n{\"type\":\"no_such_type\",\"ts_ns\":1}\nnot json\n\n"
             "{\"type\":\"session_start\",\"ts_ns\":1,\"wall_ns\":2,\"session_id\":\"s\",\"app_name\":\"a\",\"pid\":1,"
             "\"host\":\"h\",\"channel\":\"device\",\"part\":0,\"format_version\":1,\"gpufl_version\":\"0\"}\n"
             "{\"type\":\"kernel\",\"name\":\"\xff\"}\n%s",
             kernel, scope_end, kernel); /* the last line without '\n' */
    gpufl__serve_batch b = {0};
    assert_int_equal(gpufl__serve_batch_build(&b, 40, body, strlen(body)), 0);
    assert_int_equal(b.lines, 8);
    assert_int_equal(b.rows, 3);
    assert_int_equal(b.rejected, 5);
    assert_int_equal(b.nerrors, 5);
    const uint64_t bad_lines[] = {2, 3, 4, 5, 6};
    const char *const reasons[] = {"unknown \"type\"", "not a gpufl event", "empty line", "session line", "UTF-8"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(b.errors[i].line, bad_lines[i]);
        assert_non_null(strstr(b.errors[i].reason, reasons[i]));
    }
    /* seq, type, ts, dur, name (tab escaped), device, stream, the line (its tab escapes escaped) */
    assert_non_null(strstr(row(&b, 0), "40\tkernel\t100\t250\tgemm\\t<float>\t1\t7\t{\"type\":\"kernel\""));
    assert_non_null(strstr(row(&b, 0), "\"name\":\"gemm\\\\t<float>\""));
    /* a scope end is stored as its interval: from its begin, with its duration */
    assert_string_equal(row(&b, 1), "41\tscope_end\t400\t500\tstep\t\\N\t\\N\t" /* then the line */
                                    "{\"type\":\"scope_end\",\"ts_ns\":900,\"tid\":5,\"id\":1,\"parent\":0,\"depth\":0,"
                                    "\"name\":\"step\",\"begin_ns\":400,\"dur_ns\":500}");
    assert_non_null(strstr(row(&b, 2), "47\tkernel\t100\t250"));
    gpufl__serve_batch_free(&b);

    /* empty body: no lines; one newline: one empty line */
    assert_int_equal(gpufl__serve_batch_build(&b, 0, "", 0), 0);
    assert_int_equal(b.lines, 0);
    gpufl__serve_batch_free(&b);
    assert_int_equal(gpufl__serve_batch_build(&b, 0, "\n", 1), 0);
    assert_int_equal(b.lines, 1);
    assert_int_equal(b.rejected, 1);
    gpufl__serve_batch_free(&b);
}

static void test_batch_error_list_is_capped(void **state)
{
    (void)state;
    size_t n = 1000;
    char *body = malloc(n * 2);
    for (size_t i = 0; i < n; i++)
        body[2 * i] = 'x', body[2 * i + 1] = '\n';
    gpufl__serve_batch b = {0};
    assert_int_equal(gpufl__serve_batch_build(&b, 0, body, n * 2), 0);
    assert_int_equal(b.rejected, n);
    assert_int_equal(b.nerrors, GPUFL__SERVE_MAX_ERRORS);
    assert_int_equal(b.errors[GPUFL__SERVE_MAX_ERRORS - 1].line, GPUFL__SERVE_MAX_ERRORS - 1);
    gpufl__serve_batch_free(&b);
    free(body);
}

static void test_copy_text_escapes(void **state)
{
    (void)state;
    gpufl__bytebuf o = {0};
    static const char in[] = "a\\b\tc\nd\re\0f\xc3\xa9g\xffh";
    assert_int_equal(gpufl__serve_copy_text(&o, in, sizeof in - 1), 0);
    static const char want[] = "a\\\\b\\tc\\nd\\re?f\xc3\xa9g?h";
    assert_int_equal(o.len, sizeof want - 1);
    assert_memory_equal(o.p, want, o.len);
    gpufl__bytebuf_free(&o);
}

/* ---- gzip ------------------------------------------------------------------------ */

static size_t gz(const void *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    return len;
}

static void test_gunzip(void **state)
{
    (void)state;
    static uint8_t a[1 << 16], b[1 << 16];
    size_t na = gz("hello ", 6, a, sizeof a), nb = gz("world\n", 6, b, sizeof b);
    gpufl__bytebuf out = {0};
    assert_int_equal(gpufl__serve_gunzip(a, na, 1 << 20, &out), 0);
    assert_int_equal(out.len, 6);
    assert_memory_equal(out.p, "hello ", 6);
    /* two members, as gzip(1) concatenates them */
    memcpy(a + na, b, nb);
    assert_int_equal(gpufl__serve_gunzip(a, na + nb, 1 << 20, &out), 0);
    assert_int_equal(out.len, 12);
    assert_memory_equal(out.p, "hello world\n", 12);
    /* cut short, not gzip, empty */
    assert_int_equal(gpufl__serve_gunzip(a, na - 4, 1 << 20, &out), GPUFL_ECORRUPT);
    assert_int_equal(gpufl__serve_gunzip("plain text", 10, 1 << 20, &out), GPUFL_ECORRUPT);
    assert_int_equal(gpufl__serve_gunzip("", 0, 1 << 20, &out), GPUFL_ECORRUPT);
    /* a bomb: 8 MiB of zeros is ~8 KiB of gzip; a 1 MiB cap stops it at 1 MiB */
    size_t big = 8u << 20;
    uint8_t *zeros = calloc(1, big), *bomb = malloc(1 << 16);
    size_t nbomb = gz(zeros, big, bomb, 1 << 16);
    assert_int_equal(gpufl__serve_gunzip(bomb, nbomb, 1u << 20, &out), GPUFL_EUNSUPPORTED);
    assert_true(out.cap <= (1u << 20));
    assert_int_equal(gpufl__serve_gunzip(bomb, nbomb, big, &out), 0); /* exactly at the cap: fine */
    assert_int_equal(out.len, big);
    free(zeros);
    free(bomb);
    gpufl__bytebuf_free(&out);
}

/* ---- HTTP -------------------------------------------------------------------------- */

typedef struct pair {
    int client;
    gpufl__serve_conn *c;
} pair;

static pair open_pair(void)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    pair p = {sv[1], gpufl__serve_conn_new(sv[0], NULL)};
    assert_non_null(p.c);
    return p;
}

static void close_pair(pair *p)
{
    gpufl__serve_conn_free(p->c);
    if (p->client >= 0)
        close(p->client);
}

static int request(const char *text, gpufl__serve_request *req, bool close_after)
{
    pair p = open_pair();
    assert_int_equal(write(p.client, text, strlen(text)), (ssize_t)strlen(text));
    if (close_after) {
        close(p.client);
        p.client = -1;
    }
    int rc = gpufl__serve_read_request(p.c, req, gpufl__serve_now_ns() + 2000000000ull);
    close_pair(&p);
    return rc;
}

static void test_http_requests(void **state)
{
    (void)state;
    gpufl__serve_request r;
    assert_int_equal(request("POST /api/v1/events/stream?x=1 HTTP/1.1\r\nAuthorization:  Bearer k \r\n"
                             "x-gpufl-channel: device\r\nX-GPUFL-FIRST-SEQ: 5\r\nX-GpuFlight-Session-Id: s1\r\n"
                             "Content-Length: 4\r\n\r\nbody",
                             &r, false),
                     0);
    assert_string_equal(r.method, "POST");
    assert_string_equal(r.path, "/api/v1/events/stream");
    assert_string_equal(r.authorization, "Bearer k");
    assert_string_equal(r.channel, "device");
    assert_string_equal(r.first_seq, "5");
    assert_string_equal(r.session_id, "s1");
    assert_true(r.keep_alive);
    assert_int_equal(r.body_len, 4);
    assert_memory_equal(r.body, "body", 4);

    assert_int_equal(request("GET /h HTTP/1.1\r\nConnection: close\r\n\r\n", &r, false), 0);
    assert_false(r.keep_alive);
    assert_int_equal(request("GET /h HTTP/1.0\r\n\r\n", &r, false), 0);
    assert_false(r.keep_alive);
    assert_int_equal(request("POST /x HTTP/1.1\r\nContent-Length: 8388609\r\n\r\n", &r, false), 413);
    assert_int_equal(request("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r, false), 411);
    assert_int_equal(request("POST /x HTTP/1.1\r\n\r\n", &r, false), 411);
    assert_int_equal(request("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", &r, false), 400);
    assert_int_equal(request("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", &r, false), 400);
    assert_int_equal(request("GET /x HTTP/2.0\r\n\r\n", &r, false), 505);
    assert_int_equal(request("hello\r\n\r\n", &r, false), 400);
    assert_int_equal(request("GET /x HTTP/1.1\r\nno colon here\r\n\r\n", &r, false), 400);
    /* cut: mid-body, mid-head; closed before a byte */
    assert_int_equal(request("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", &r, true), GPUFL_EIO);
    assert_int_equal(request("POST /x HTTP/1.1\r\nContent-Le", &r, true), GPUFL_EIO);
    assert_int_equal(request("", &r, true), 1);
    /* a head that never ends: 431 at 16 KiB, not a buffer that grows */
    char *huge = malloc(GPUFL__SERVE_MAX_HEAD + 64);
    strcpy(huge, "GET /x HTTP/1.1\r\nX-Long: ");
    memset(huge + strlen(huge), 'a', GPUFL__SERVE_MAX_HEAD);
    huge[GPUFL__SERVE_MAX_HEAD + 20] = '\0';
    pair p = open_pair();
    assert_int_equal(write(p.client, huge, strlen(huge)), (ssize_t)strlen(huge));
    assert_int_equal(gpufl__serve_read_request(p.c, &r, gpufl__serve_now_ns() + 2000000000ull), 431);
    close_pair(&p);
    free(huge);
}

/* Two requests in one write: both read, the second without waiting; a
 * 100-continue answered before the body; a silent peer hits the deadline. */
static void test_http_pipelined_continue_deadline(void **state)
{
    (void)state;
    pair p = open_pair();
    const char *two = "POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nxyGET /b HTTP/1.1\r\n\r\n";
    assert_int_equal(write(p.client, two, strlen(two)), (ssize_t)strlen(two));
    gpufl__serve_request r;
    uint64_t deadline = gpufl__serve_now_ns() + 2000000000ull;
    assert_int_equal(gpufl__serve_read_request(p.c, &r, deadline), 0);
    assert_string_equal(r.path, "/a");
    assert_memory_equal(r.body, "xy", 2);
    gpufl__serve_request_done(p.c, &r);
    assert_true(gpufl__serve_conn_pending(p.c));
    assert_int_equal(gpufl__serve_read_request(p.c, &r, deadline), 0);
    assert_string_equal(r.path, "/b");
    gpufl__serve_request_done(p.c, &r);
    assert_false(gpufl__serve_conn_pending(p.c));

    const char *cont = "POST /c HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
    assert_int_equal(write(p.client, cont, strlen(cont)), (ssize_t)strlen(cont));
    pid_t pid = fork();
    if (pid == 0) { /* the client: waits for 100 Continue, then sends the body */
        char buf[64] = "";
        ssize_t n = read(p.client, buf, sizeof buf - 1);
        _exit(n > 0 && strstr(buf, "HTTP/1.1 100 Continue\r\n\r\n") && write(p.client, "abc", 3) == 3 ? 0 : 1);
    }
    assert_int_equal(gpufl__serve_read_request(p.c, &r, deadline), 0);
    assert_memory_equal(r.body, "abc", 3);
    gpufl__serve_request_done(p.c, &r);
    int status = -1;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* a head begun, then nothing: the deadline ends the wait */
    const char *part = "GET /d HTTP/1.1\r\n";
    assert_int_equal(write(p.client, part, strlen(part)), (ssize_t)strlen(part));
    uint64_t t0 = gpufl__serve_now_ns();
    assert_int_equal(gpufl__serve_read_request(p.c, &r, t0 + 200000000ull), GPUFL_EIO);
    uint64_t waited = gpufl__serve_now_ns() - t0;
    assert_true(waited >= 190000000ull && waited < 2000000000ull);
    close_pair(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_rows_and_rejects), cmocka_unit_test(test_batch_error_list_is_capped),
        cmocka_unit_test(test_copy_text_escapes),      cmocka_unit_test(test_gunzip),
        cmocka_unit_test(test_http_requests),          cmocka_unit_test(test_http_pipelined_continue_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
