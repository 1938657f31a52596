/*
 * storage.c: a pod's data (its spec's storage, checked by allotd), made
 * ready by its supervisor (shim.c) before the workload starts, and what
 * the workload is told of it.
 *
 *   kind      before the start                 process runtime       container
 *   hostPath  the path must exist on the node  ALLOT_HOSTPATH_<i>    -v PATH:MOUNTPATH[:ro]
 *             (else the pod fails, naming it)  = PATH                (readOnly by default,
 *                                                                    as Run:ai's document)
 *   git       cloned (git clone [--branch B],  into WORK/<path>,     into POD/git/<i>,
 *             then checkout REVISION), its     ALLOT_GIT_<i> = that  mounted at /<path>
 *             output in the pod's log          directory
 * Each instance with a name is also ALLOT_HOSTPATH_<NAME> / ALLOT_GIT_<NAME>
 * (upper case, other characters '_'); in a container the variables hold
 * the paths inside it.
 *
 * Invariants:
 *   1. Nothing of a pod's data is written outside its directory (a git
 *      path has no "..": allotd refuses it, and it is checked again here).
 *   2. A pod whose data cannot be made ready never starts: the supervisor
 *      reports it failed with the reason.
 */
#include "agent.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "";
}

static int excluded(const json_t *e)
{
    return json_is_true(json_object_get(e, "exclude"));
}

/* Where git instance i is cloned on the node. */
static void git_dir(const char *pod_dir, int container, size_t i, const json_t *e, char *out,
                    size_t len)
{
    const char *p = str_of(e, "path");

    while (*p == '/')
        p++;
    if (container)
        snprintf(out, len, "%s/git/%zu", pod_dir, i);
    else
        snprintf(out, len, "%s/work/%s", pod_dir, p);
}

/* Runs argv with stdout and stderr on log_fd; its exit status, -1 if it
 * could not run. */
static int run(char *const argv[], int log_fd)
{
    pid_t pid = fork();
    int status = 0;

    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        dup2(log_fd, 1);
        dup2(log_fd, 2);
        proc_close_from_3();
        execvp(argv[0], argv);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* mkdir -p of dir's parent. */
static int make_parent(const char *dir)
{
    char buf[AGENT_PATH_MAX];
    char *p;

    snprintf(buf, sizeof(buf), "%s", dir);
    for (p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

static int clone_one(const json_t *e, const char *dest, int log_fd, char *msg, size_t len)
{
    const char *repo = str_of(e, "repository"), *branch = str_of(e, "branch");
    const char *rev = str_of(e, "revision");
    char *clone[] = {"git", "clone", "--quiet", "--branch", (char *)branch, "--", (char *)repo,
                     (char *)dest, NULL};
    char *checkout[] = {"git", "-C", (char *)dest, "checkout", "--quiet", (char *)rev, NULL};

    if (strstr(str_of(e, "path"), "..") || make_parent(dest) != 0) {
        snprintf(msg, len, "git %.200s: cannot make %.300s", repo, dest);
        return -1;
    }
    if (!branch[0]) { /* no --branch: the repository's default */
        clone[3] = "--";
        clone[4] = (char *)repo;
        clone[5] = (char *)dest;
        clone[6] = NULL;
    }
    if (run(clone, log_fd) != 0) {
        snprintf(msg, len, "git clone %.300s failed (see the pod's log)", repo);
        return -1;
    }
    if (rev[0] && run(checkout, log_fd) != 0) {
        snprintf(msg, len, "git checkout %.100s in %.300s failed (see the pod's log)", rev, repo);
        return -1;
    }
    return 0;
}

int storage_prepare(const json_t *spec, const char *pod_dir, int container, int log_fd,
                    char *msg, size_t len)
{
    const json_t *storage = json_object_get(spec, "storage");
    char dest[AGENT_PATH_MAX];
    struct stat sb;
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(storage, "hostPath"), i, e) {
        if (excluded(e))
            continue;
        if (stat(str_of(e, "path"), &sb) != 0) {
            snprintf(msg, len, "hostPath %.400s: %s on this node", str_of(e, "path"),
                     strerror(errno));
            return -1;
        }
    }
    json_array_foreach(json_object_get(storage, "git"), i, e) {
        if (excluded(e))
            continue;
        git_dir(pod_dir, container, i, e, dest, sizeof(dest));
        if (clone_one(e, dest, log_fd, msg, len) != 0)
            return -1;
    }
    return 0;
}

/* "ALLOT_<KIND>_<name>": the name upper case, other characters '_'. */
static void var_name(const char *kind, const char *name, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "ALLOT_%s_", kind), k;

    for (k = 0; name[k] && n + 1 < len; k++, n++)
        out[n] = isalnum((unsigned char)name[k]) ? (char)toupper((unsigned char)name[k]) : '_';
    out[n < len ? n : len - 1] = '\0';
}

/* set(arg, NAME, VALUE) for variable i of a kind, and for its name. */
static void tell(storage_set_fn set, void *arg, const char *kind, size_t i, const json_t *e,
                 const char *value)
{
    char name[96];

    snprintf(name, sizeof(name), "ALLOT_%s_%zu", kind, i);
    set(arg, name, value);
    if (str_of(e, "name")[0]) {
        var_name(kind, str_of(e, "name"), name, sizeof(name));
        set(arg, name, value);
    }
}

void storage_env(const json_t *spec, const char *pod_dir, int container, storage_set_fn set,
                 void *arg)
{
    const json_t *storage = json_object_get(spec, "storage");
    char dest[AGENT_PATH_MAX];
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(storage, "hostPath"), i, e)
        if (!excluded(e))
            tell(set, arg, "HOSTPATH", i, e,
                 container ? str_of(e, "mountPath") : str_of(e, "path"));
    json_array_foreach(json_object_get(storage, "git"), i, e) {
        if (excluded(e))
            continue;
        if (container)
            snprintf(dest, sizeof(dest), "/%s", str_of(e, "path") + (str_of(e, "path")[0] == '/'));
        else
            git_dir(pod_dir, 0, i, e, dest, sizeof(dest));
        tell(set, arg, "GIT", i, e, dest);
    }
}

void storage_mounts(const json_t *spec, const char *pod_dir, storage_mount_fn mount, void *arg)
{
    const json_t *storage = json_object_get(spec, "storage");
    char host[AGENT_PATH_MAX], target[AGENT_PATH_MAX];
    json_t *e, *ro;
    size_t i;

    json_array_foreach(json_object_get(storage, "hostPath"), i, e) {
        if (excluded(e))
            continue;
        ro = json_object_get(e, "readOnly");
        mount(arg, str_of(e, "path"), str_of(e, "mountPath"), !json_is_false(ro));
    }
    json_array_foreach(json_object_get(storage, "git"), i, e) {
        if (excluded(e))
            continue;
        git_dir(pod_dir, 1, i, e, host, sizeof(host));
        snprintf(target, sizeof(target), "/%s", str_of(e, "path") + (str_of(e, "path")[0] == '/'));
        mount(arg, host, target, 0);
    }
}
