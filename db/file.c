/*
 * file.c: the database's files seen from the operating system: the lock
 * that keeps a second server off a database, creating a database file
 * readable by its owner only, removing a database with its companions,
 * and noticing that the file was removed or replaced while open.
 *
 * The lock is an flock(2) on PATH.lock, taken before the database is
 * opened (or removed, for a fresh one) and held until db_close(): the
 * kernel drops it when the process ends, however it ends, so a crash never
 * leaves a stale lock. The file holds the holder's pid, for the message a
 * second server prints. flock locks are independent of the POSIX record
 * locks SQLite takes on the database itself, and the lock file is a file
 * of its own, so opening or closing it never drops one of SQLite's locks.
 *
 * Invariants:
 *   1. Between db__lock() and db__unlock() no other process that takes
 *      the lock (another allotd) opens, creates or removes the database.
 *   2. A file created here is created with mode 0600 before SQLite opens
 *      it; SQLite gives its -wal and -shm files the mode of the database
 *      file, so they are 0600 too.
 *   3. db__file_same() is true only while the path still names the file
 *      that was opened (same device and inode).
 *   4. db__file_writable() asks the kernel as an open for writing would:
 *      file mode (for this process's user), immutable flag, read-only
 *      file system.
 */
#include "db_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The companions SQLite keeps beside a database in WAL mode. */
static const char *const companions[] = {"", "-wal", "-shm", "-journal"};

int db__lock(const char *path, int *fd_out)
{
    char lock[DB__PATH_MAX + 8], pid[32];
    char held[32] = "";
    ssize_t n;
    int fd, rc = DB_OK;

    *fd_out = -1;
    if (snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock))
        return DB_EINVAL;
    fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        fprintf(stderr, "allotd: cannot create the lock file %s: %s\n", lock, strerror(errno));
        return errno == EROFS || errno == EACCES || errno == EPERM ? DB_EREADONLY : DB_EIO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        n = pread(fd, held, sizeof(held) - 1, 0);
        held[n > 0 ? n : 0] = 0;
        held[strcspn(held, "\n")] = 0;
        fprintf(stderr, "allotd: the database %s is in use by another allotd%s%s%s: stop it first"
                " (two servers on one database would place pods twice)\n", path,
                held[0] ? " (pid " : "", held, held[0] ? ")" : "");
        rc = DB_EBUSY;
        goto out_close;
    }
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        fprintf(stderr, "allotd: cannot write %s: %s\n", lock, strerror(errno));
    *fd_out = fd;
    return DB_OK;
out_close:
    close(fd);
    return rc;
}

void db__unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* drops the flock; the pid left in the file is only a hint */
}

int db__exists(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0;
}

int db__create(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

    if (fd < 0) {
        if (errno == EEXIST)
            fprintf(stderr, "allotd: a database exists already at %s: start allotd without --init"
                    " to use it (or remove it first to start over)\n", path);
        else
            fprintf(stderr, "allotd: cannot create the database %s: %s\n", path,
                    strerror(errno));
        return errno == EEXIST ? DB_ECONFLICT
               : errno == ENOSPC ? DB_EFULL
               : errno == EROFS || errno == EACCES || errno == EPERM ? DB_EREADONLY
               : DB_EIO;
    }
    if (fchmod(fd, 0600) != 0 || fsync(fd) != 0) {
        close(fd);
        return DB_EIO;
    }
    close(fd);
    return DB_OK;
}

int db__remove(const char *path)
{
    char p[DB__PATH_MAX + 16];
    size_t i;
    int rc = DB_OK;

    for (i = 0; i < sizeof(companions) / sizeof(companions[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, companions[i]);
        if (unlink(p) != 0 && errno != ENOENT) {
            fprintf(stderr, "allotd: cannot remove %s: %s\n", p, strerror(errno));
            rc = DB_EIO;
        }
    }
    return rc;
}

int db__file_id(const char *path, struct db__file_id *out)
{
    struct stat sb;

    if (stat(path, &sb) != 0)
        return DB_EGONE;
    out->dev = (uint64_t)sb.st_dev;
    out->ino = (uint64_t)sb.st_ino;
    out->mode = (unsigned)sb.st_mode & 0777;
    return DB_OK;
}

int db__file_writable(const char *path)
{
    if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0)
        return DB_OK;
    return errno == ENOENT ? DB_EGONE : DB_EREADONLY;
}

int db__files_writable(const char *path)
{
    char p[DB__PATH_MAX + 16];
    size_t i;
    int rc = DB_OK;

    for (i = 0; rc == DB_OK && i < sizeof(companions) / sizeof(companions[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, companions[i]);
        rc = db__file_writable(p);
        if (rc == DB_EGONE && i > 0)
            rc = DB_OK; /* companions come and go */
        else if (rc == DB_EREADONLY && i > 0)
            fprintf(stderr, "allotd: %s is read-only\n", p);
    }
    return rc;
}

int64_t db__free_bytes(const char *path)
{
    struct statvfs sv;

    if (statvfs(path, &sv) != 0)
        return -1;
    /* root may write into the blocks reserved for it */
    return (int64_t)(geteuid() == 0 ? sv.f_bfree : sv.f_bavail) * (int64_t)sv.f_frsize;
}

int db__file_same(const char *path, const struct db__file_id *id)
{
    struct db__file_id now;

    return db__file_id(path, &now) == DB_OK && now.dev == id->dev && now.ino == id->ino;
}
