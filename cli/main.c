/* main.c: placeholder entry of allot. */
#include <stdio.h>
int main(void) { puts("allot"); return 0; }
