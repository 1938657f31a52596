/*
 * fileio.c: whole reads and writes of a file descriptor (fileio.h).
 */
#include "fileio.h"

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

size_t fio_read(int fd, void *buf, size_t n, int64_t off)
{
    char *p = buf;
    size_t got = 0;

    while (got < n) {
        ssize_t k = off < 0 ? read(fd, p + got, n - got)
                            : pread(fd, p + got, n - got, (off_t)(off + (int64_t)got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

int fio_write(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
