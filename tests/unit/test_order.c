/*
 * test_order.c: who goes first (scheduler/order.c): job order inside a
 * project, queue order between projects, rank for spare capacity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_world.h"

/* Each case: the world, one cycle, who runs and who waits. */
static const struct tw_case order_cases[] = {
    {"higher priority first, whatever the submission order",
     "node node-1 1; queue p 1; wl old p 1 1; wl urgent p 1 1 prio=75; cycle",
     "Running urgent; Pending old"},
    {"equal priority: the earlier submission first",
     "node node-1 1; queue p 1; wl second p 1 1 seq=2; wl first p 1 1 seq=1; cycle",
     "Running first; Pending second"},
    /* even when the other's workload is older */
    {"a project within deserved before one that would exceed it",
     "node node-1 2; queue team-a 1; queue team-b 1; wl a1 team-a 1 1 on=node-1:1;"
     " wl a2 team-a 1 1; wl b1 team-b 1 1; cycle",
     "Running b1; Pending a2"},
    {"with nothing deserved, the higher rank takes the spare GPU",
     "node node-1 1; queue low 0; queue high 0 rank=1; wl l1 low 1 1; wl h1 high 1 1; cycle",
     "Running h1; Pending l1"},
    /* two projects, equal quotas, four GPUs, each asking four: they end
     * with two each (each its oldest), not four and zero */
    {"queues alternate as their shares move",
     "node node-1 4; queue team-a 2; queue team-b 2; wl a0 team-a 1 1; wl a1 team-a 1 1;"
     " wl a2 team-a 1 1; wl a3 team-a 1 1; wl b0 team-b 1 1; wl b1 team-b 1 1; wl b2 team-b 1 1;"
     " wl b3 team-b 1 1; cycle",
     "Running a0 a1 b0 b1; Pending a2 a3 b2 b3"},
};

int main(void)
{
    return tw_main(order_cases, TW_NCASES(order_cases));
}
