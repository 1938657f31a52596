/*
 * test_victims.c: whom reclaim and preempt evict (scheduler/victims.c):
 * fewest GPUs first, then the queue furthest above its fair share, then
 * the lowest priority, then the newest; protected and non-preemptible
 * workloads are never taken; elastic workloads give one pod at a time; a
 * whole-device reclaimer has a device emptied, not only freed in part.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_world.h"

/* Each case: the world and its script, then who runs, who waits and
 * whom the last cycle evicted. */
static const struct tw_case victim_cases[] = {
    /* the Run:ai quick start: b2 takes the GPU of the 1-GPU a1, not of the 2-GPU a2 */
    {"fewest GPUs first",
     "node node-1 2; node node-2 2; queue team-a 2; queue team-b 2; wl a1 team-a 1 1;"
     " wl a2 team-a 1 2; wl b1 team-b 1 1; settle; expect Running a1 a2 b1; wl b2 team-b 1 1;"
     " cycle",
     "evicted a1; kept a2; Running b2; @node-1 b2"},
    /* equal GPUs on two nodes: the victim of the queue above its fair share
     * wins over an earlier node whose workloads belong to a queue at its share */
    {"the queue furthest above its fair share first",
     "node n1 2; node n2 2; queue team-a 1; queue team-b 1; queue team-c 0 weight=0;"
     " wl a1 team-a 1 1 on=n1:1; wl a2 team-a 1 1 on=n1:2; wl c1 team-c 1 1 on=n2:1;"
     " wl a3 team-a 1 1 on=n2:2; wl b1 team-b 1 1; cycle",
     "evicted c1; kept a1 a2 a3; @n2 b1"},
    /* inside a project: strictly higher priority preempts (equal priority
     * never does), the lowest priority goes first */
    {"the lowest priority first",
     "node node-1 2; queue p 2; wl x p 1 1 prio=40; wl y p 1 1; settle; wl equal p 1 1 prio=40;"
     " cycle; expect kept x y; expect Pending equal; phase equal Completed;"
     " wl z p 1 1 prio=75; cycle",
     "evicted x; kept y; Running z"},
    /* the pool's minimum guaranteed runtime protects a young workload */
    {"the minimum runtime protects",
     "pool 0 minruntime=3600000; node node-1 2; queue p1 0; queue p2 2; wl t1 p1 1 2; settle;"
     " now 600000; wl t2 p2 1 2; cycle; expect kept t1; now 3600000; cycle",
     "evicted t1; Running t2"},
    {"non-preemptible work is never a victim, even far above fair share",
     "node node-1 2; queue p1 0; queue p2 2; wl ws p1 1 2 prio=100 on=node-1:3; wl t p2 1 1;"
     " cycle",
     "kept ws; why=InsufficientResources t"},
    /* t's GPU comes from e, which keeps running on the rest */
    {"an elastic workload above its minimum gives one pod",
     "node node-1 4; queue p1 0; queue p2 2; wl e p1 4 1 min=2; settle; expect Running e;"
     " wl t p2 1 1; cycle",
     "pods-evicted=1 e; Running e t"},
    /* a whole-device reclaimer needs an empty device. Device 0 of node-1
     * holds two fractions of 500 (taking one leaves the device in use:
     * both go), one whole-device pod (it alone goes), or two whole-device
     * pods charged over its capacity (both go); device 1 holds
     * non-preemptible work */
    {"a whole-device reclaimer has two fractions taken",
     "node node-1 2; queue p1 0; queue p2 2; wl ws p1 1 1 prio=100 on=node-1:0x2;"
     " wl v1 p1 1 0 portion=500 on=node-1:0x1; wl v2 p1 1 0 portion=500 on=node-1:0x1;"
     " wl t p2 1 1; cycle; expect evicted v1 v2; expect kept ws; settle",
     "Running t; @node-1:0x1 t"},
    {"a whole-device reclaimer has one whole-device pod taken",
     "node node-1 2; queue p1 0; queue p2 2; wl ws p1 1 1 prio=100 on=node-1:0x2;"
     " wl v1 p1 1 1 on=node-1:0x1; wl t p2 1 1; cycle; expect evicted v1; expect kept ws; settle",
     "Running t; @node-1:0x1 t"},
    {"a whole-device reclaimer has two whole-device pods over capacity taken",
     "node node-1 2; queue p1 0; queue p2 2; wl ws p1 1 1 prio=100 on=node-1:0x2;"
     " wl v1 p1 1 1 on=node-1:0x1; wl v2 p1 1 1 on=node-1:0x1; wl t p2 1 1; cycle;"
     " expect evicted v1 v2; expect kept ws; settle",
     "Running t; @node-1:0x1 t"},
};

int main(void)
{
    return tw_main(victim_cases, TW_NCASES(victim_cases));
}
