/*
 * v1.h: the runai v1 command forms (`allot submit`, `allot list jobs`,
 * `allot describe job NAME`, ...), mapped onto allot's v2 commands with a
 * one-line notice on stderr (v1.c).
 */
#ifndef ALLOT_V1_H
#define ALLOT_V1_H

/* Runs argv (from the v1 word on) as its v2 command and returns its exit
 * status; -1 if argv[0] is no v1 word. */
int v1_main(int argc, char **argv);

/* The v1 word nearest to word (cli_nearest), or NULL; *dist its edits. */
const char *v1_nearest(const char *word, int *dist);

#endif
