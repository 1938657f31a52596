/*
 * simulate.h: `allot simulate`, which runs scenario files through the
 * scheduling core with no server (../shared/scenarios/FORMAT.md).
 */
#ifndef ALLOT_SIMULATE_H
#define ALLOT_SIMULATE_H

/* argv[0] is "simulate". Returns the exit status: 0 when every check
 * held, 1 when one failed, 2 on a usage error or a file that could not
 * be read or run. */
int simulate_main(int argc, char **argv);

#endif
