/* A child of the traced program that still has the sampler preloaded (Open MPI's
 * singleton starts its orted daemon so) must not trace: it would write the same rank
 * files at its exit, after the program's, and replace them. The program starts
 * `ls_child LIB OUT child FD` with LD_PRELOAD=LIB in its environment, waits until the
 * child's main runs (a byte on the pipe FD: its constructors, where it decides whether to
 * trace, are done), prints the child's pid and exits first; the child touches a big array
 * and exits a second later. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[3], "child") == 0) {
        int fd = atoi(argv[4]);
        if (write(fd, "r", 1) != 1) return 4;
        close(fd);
        char *big = malloc(64 * 4096);
        memset(big, 1, 64 * 4096);
        sleep(1);
        return big[100] == 1 ? 0 : 1;
    }
    if (argc != 3) return 2;
    int fds[2];
    if (pipe(fds) != 0) return 3;
    char pre[1024], out[1024], fd[16];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", argv[1]);
    snprintf(out, sizeof out, "CLAMPI_LOCALITY_OUT=%s", argv[2]);
    snprintf(fd, sizeof fd, "%d", fds[1]);
    char *env[] = {pre, out, NULL};
    char *args[] = {argv[0], argv[1], argv[2], "child", fd, NULL};
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, args, env) != 0) return 3;
    close(fds[1]);
    double *mine = malloc(16 * 4096); /* the program's own structure */
    for (int i = 0; i < 16 * 512; i++) mine[i] = i;
    char c;
    if (read(fds[0], &c, 1) != 1) return 5; /* the child's start-up ran while this process lived */
    printf("%f\nchild pid %d\n", mine[100], (int)pid);
    return 0;
}
