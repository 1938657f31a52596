/*
 * sim.h: the map of allot_sim, the engines that drive the scheduling core
 * without a server. `allot simulate` and `allot replay` (cli/), the
 * benchmarks and the tests link this library; allotd does not.
 *
 *   scenario.h   a scenario file (../shared/scenarios/FORMAT.md) read into
 *                a model: scenario.c, scenario_queue.c, scenario_step.c,
 *                scenario_expect.c, with the strict reader jread.h
 *   world.h      the simulated cluster a scenario or a replay runs on: the
 *                steps that change it (world.c), the devices its pods hold
 *                (world_devices.c) and one scheduling pass (world_pass.c)
 *   expect.h     the checks of a scenario's `expect` steps
 *   trace.h      a GPU cluster trace in the Alibaba "openb" shape, read
 *                with csv.h
 *   replay_engine.h
 *                the trace replay: the model, one policy's run, the FIFO
 *                baseline, inflation, statistics and the report (svg.h)
 *   grow.h       the doubling of the growing arrays above
 *
 * Rules of the library:
 *   1. It drives the core only through scheduler/sched.h: one snapshot in,
 *      decisions out, applied with sched_apply_decision(). It never decides
 *      anything the core would decide, except the FIFO baseline, which is a
 *      separate placer on purpose.
 *   2. It keeps the core's determinism: the same files and options give
 *      the same output bytes (timings aside, which are printed only when
 *      asked for).
 *   3. It does no network I/O; it reads the files it is given and writes
 *      only the report files it is asked for.
 */
#ifndef ALLOT_SIM_H
#define ALLOT_SIM_H
#endif
