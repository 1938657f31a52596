/*
 * fileio.h: reading and writing a file descriptor to the end of what was
 * asked, retrying a call a signal interrupted (EINTR), as the agent's and
 * allotd's file writers and readers need.
 */
#ifndef ALLOT_FILEIO_H
#define ALLOT_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Reads up to n bytes of fd into buf, at offset off (pread) or, when off
 * is negative, at fd's position (read); the bytes read, fewer than n at
 * the end of the file or on an error. */
size_t fio_read(int fd, void *buf, size_t n, int64_t off);
/* Writes all n bytes of buf to fd: 0, or -1 if a write failed or wrote
 * nothing. */
int fio_write(int fd, const void *buf, size_t n);

#endif
