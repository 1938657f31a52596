/*
 * cow.h: run a function on a copy-on-write image of this process's memory
 * (cow.c): a forked child calls it, and what it writes comes back to the
 * caller as bytes. A trial that changes large structures in place (a
 * scheduler's kept state) runs there and leaves the caller's untouched,
 * at the cost of the fork (page tables, not pages) and of the pages the
 * child writes.
 *
 * The child is this process's calling thread alone: fn must not take a
 * lock another thread may hold, nor touch files, sockets or the database;
 * malloc is safe (the C library resets its locks in the child). The child
 * ends with _exit(), running no exit handler.
 */
#ifndef ALLOT_COW_H
#define ALLOT_COW_H

#include <stddef.h>

/* What the child writes: cow_put() appends bytes to the answer. */
struct cow_out;
int cow_put(struct cow_out *o, const void *p, size_t n);   /* 0; -1 the pipe broke */

/* Forks; the child runs fn(arg, out). The caller gets the bytes in *buf
 * (malloc'd, NUL-terminated beyond *len; NULL and 0 when none). 0 when fn
 * returned 0 and every byte came back; -1 otherwise (no fork, fn failed,
 * the child died or took longer than COW_WAIT_MS: *buf is NULL). The
 * child is reaped: by a later call when it is still tearing its memory
 * down once its answer is read (no thread is started for it). */
int cow_run(int (*fn)(void *arg, struct cow_out *out), void *arg, char **buf, size_t *len);

/* cow_run() in two halves, so that a caller may give a lock back once the
 * image is taken: cow_start() forks (the child runs fn as cow_run()'s),
 * cow_finish() reads the answer and reaps the child, as cow_run()
 * returns. 0 from cow_start() means a cow_finish() must follow. */
struct cow_child {
    int fd;
    int pid;
    int wait_ms;   /* how long cow_finish() waits for the answer: COW_WAIT_MS */
};
/* A child that has not answered within wait_ms is killed, and its run
 * fails (the caller takes its other way). */
#define COW_WAIT_MS 30000
int cow_start(int (*fn)(void *arg, struct cow_out *out), void *arg, struct cow_child *c);
int cow_finish(struct cow_child *c, char **buf, size_t *len);

/* Reads the answer back in order: cow_get() copies n bytes from *at and
 * moves it on; -1 when fewer are left. */
int cow_get(const char *buf, size_t len, size_t *at, void *p, size_t n);

#endif /* ALLOT_COW_H */
