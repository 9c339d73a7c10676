/*
 * A small HTTP server for the uploader's tests: docs/UPLOAD.md's server
 * side on 127.0.0.1 (sessions, events/stream, session-complete), one
 * connection at a time on a thread of its own, answering "Connection:
 * close". It stores each (session, channel, place) and counts how often
 * each was sent, records every request (path, headers, the body
 * decompressed), and follows a script: the next requests to a path get a
 * status, a connection cut in the middle of their body, or are stored and
 * then cut before the answer (an answer lost on the way).
 *
 * Tests only: failures abort.
 */
#ifndef GPUFL_TEST_UPLOAD_SERVER_H
#define GPUFL_TEST_UPLOAD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum us_action_kind {
    US_STATUS,       /* answer `status` with {"error":"scripted"} and store nothing */
    US_CUT_BODY,     /* read half the body, then close the connection */
    US_STORE_AND_CUT /* handle the request, then close without answering */
} us_action_kind;

typedef struct us_request {
    char path[256];
    char *headers; /* the header block as received, "\r\n" between lines */
    char *body;    /* decompressed */
    size_t body_len;
    uint64_t t_ns; /* CLOCK_MONOTONIC when it was read */
    int status;    /* what was answered (0: cut) */
} us_request;

typedef struct upload_server upload_server;

/* Starts a server that takes the key `key`. */
upload_server *us_start(const char *key);
int us_port(const upload_server *s);
/* "http://127.0.0.1:PORT" */
const char *us_url(const upload_server *s);
void us_stop(upload_server *s);

/* Request number nth (from 0, counted from now) whose path ends with
 * path_suffix gets `kind` (status for US_STATUS); the others are served. */
void us_script(upload_server *s, const char *path_suffix, size_t nth, us_action_kind kind, int status);
/* Batches of more lines than this get 413 (0: no limit). */
void us_max_lines(upload_server *s, size_t n);
/* Forgets the sessions announced (a new database): the next batch gets 404. */
void us_forget_sessions(upload_server *s);

size_t us_nrequests(upload_server *s);
const us_request *us_request_at(upload_server *s, size_t i);
/* The value of header name in request i ("" when absent). */
const char *us_header(upload_server *s, size_t i, const char *name, char *buf, size_t len);

/* Places of a session's channel the server holds: how many (the highest
 * + 1), and for place p the line stored and how many times it was sent. */
size_t us_places(upload_server *s, const char *session, const char *channel);
const char *us_line(upload_server *s, const char *session, const char *channel, size_t place, int *sent);

#endif /* GPUFL_TEST_UPLOAD_SERVER_H */
