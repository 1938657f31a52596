/*
 * thread_role.c: thread names, with prctl(PR_SET_NAME) on the calling
 * thread (pthread_setname_np needs _GNU_SOURCE in every caller).
 */
#include "thread_role.h"

#include <sys/prctl.h>

void thread_role_name(const char *name)
{
    prctl(PR_SET_NAME, name, 0, 0, 0);
}
