/* Static arrays (STREAM as published) and a program ending with _exit().
 *   ls_static [exit|_exit|_Exit]
 * Thread 0 first-touches the first half of a[] and thread 1 the second half; b[] is
 * initialized data (.data), c[] is touched by the main thread; then the program ends the
 * chosen way (exit status 3 for _exit/_Exit). A signal is handled on a static alternate
 * signal stack on the way (the kernel cannot fault writing a protected page). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N (64 * 1024)
static double a[N];  /* .bss, 512 KiB */
double b[N] = {1.0}; /* .data */
static double c[N];
static char small[64];         /* below --min-size: not tracked */
static char altstack[1 << 16]; /* a static alternate signal stack: the kernel writes it */
static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig) {
    (void)sig;
    got_usr1 = 1;
}

static void *second_half(void *arg) {
    (void)arg;
    for (size_t i = N / 2; i < N; i++) a[i] = 2.0; /* @A_T1 */
    return NULL;
}

int main(int argc, char **argv) {
    for (size_t i = 0; i < N / 2; i++) a[i] = 1.0; /* @A_T0 */
    pthread_t t;
    pthread_create(&t, NULL, second_half, NULL);
    pthread_join(t, NULL);
    double s = 0;
    for (size_t i = 0; i < N; i++) s += b[i]; /* @B */
    memset(c, 1, sizeof c);                   /* @C */
    small[0] = (char)s;
    /* a signal delivered on the static alternate stack (tracked static data) */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0 || raise(SIGUSR1) != 0 || !got_usr1) return 9;
    printf("sum %g %g %d\n", s, a[N - 1] + c[0], small[0]);
    fflush(stdout);
    const char *how = argc > 1 ? argv[1] : "exit";
    if (strcmp(how, "_exit") == 0) _exit(3);
    if (strcmp(how, "_Exit") == 0) _Exit(3);
    return 0;
}
