/*
 * thread_role.c: thread names, with prctl(PR_SET_NAME) on the calling
 * thread (pthread_setname_np needs _GNU_SOURCE in every caller), and
 * stopping a thread that waits on a condition variable.
 */
#include "thread_role.h"

#include <sys/prctl.h>

void thread_role_name(const char *name)
{
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

void thread_role_stop(pthread_t th, pthread_mutex_t *mu, pthread_cond_t *cv, int *stop)
{
    pthread_mutex_lock(mu);
    *stop = 1;
    pthread_cond_signal(cv);
    pthread_mutex_unlock(mu);
    pthread_join(th, NULL);
}
