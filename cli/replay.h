/*
 * replay.h: `allot replay`, which replays a GPU cluster trace through the
 * scheduling core and a FIFO baseline and reports how each policy did.
 */
#ifndef ALLOT_REPLAY_H
#define ALLOT_REPLAY_H

/* argv[0] is "replay". Returns the exit status: 0 on success, 1 when a
 * run failed, 2 on a usage error or a file that could not be read. */
int replay_main(int argc, char **argv);
/* `allot replay --protocol paper ...` (replay_paper.c); the same statuses. */
int replay_paper_main(int argc, char **argv);

#endif
