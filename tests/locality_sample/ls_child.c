/* A child of the traced program that still has the sampler preloaded (Open MPI's
 * singleton starts its orted daemon so) must not trace: it would write the same rank
 * files at its exit, after the program's, and replace them. The program starts
 * `ls_child LIB OUT child` with LD_PRELOAD=LIB in its environment, waits until the child
 * is running, and exits first; the child touches a big array and exits a second later. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[3], "child") == 0) {
        char *big = malloc(64 * 4096);
        memset(big, 1, 64 * 4096);
        sleep(1);
        return big[100] == 1 ? 0 : 1;
    }
    if (argc != 3) return 2;
    char pre[1024], out[1024];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", argv[1]);
    snprintf(out, sizeof out, "CLAMPI_LOCALITY_OUT=%s", argv[2]);
    char *env[] = {pre, out, NULL};
    char *args[] = {argv[0], argv[1], argv[2], "child", NULL};
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, args, env) != 0) return 3;
    double *mine = malloc(16 * 4096); /* the program's own structure */
    for (int i = 0; i < 16 * 512; i++) mine[i] = i;
    usleep(300 * 1000); /* the child's start-up runs while this process lives */
    printf("%f\n", mine[100]);
    return 0;
}
