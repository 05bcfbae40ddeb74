/* First touches in runs of pages the sampler opens ahead of a thread (lease.c): every
 * page's first-touching thread is known by construction, and the check compares.
 *   ls_ahead
 * Threads: main 0, workers 1 and 2 (created in that order).
 * - blocks[k]: page i is written first by worker 1 + (i / k) % 2, both at once, each
 *   ascending through its own pages (k = 1, 3, 8, 64): a lease opened for one worker runs
 *   into the other's pages, which the other then touches first. Afterwards both workers
 *   and main read every page.
 * - half: worker 1 writes the first half in order, later worker 2 the second half: the
 *   pages of worker 1's last lease that it never touched go to worker 2.
 * - stride: worker 1 writes every other page; main then writes all: the odd pages, inside
 *   worker 1's leases but never touched by it, are main's.
 * - syscall: worker 1 writes page 0 (a lease opens after it); worker 2 then read()s into
 *   page 2; main writes all: page 2 is worker 2's (at the read), 0 worker 1's, the rest main's.
 * - long: main writes 4,096 pages in order (one streak).
 * - send: worker 2 writes 64 pages in order; main then pwrite()s them to a file (the
 *   kernel reads them with main's key rights): all bytes are written.
 * - handler: main writes 64 pages in order; a SIGUSR1 handler installed with every signal
 *   blocked reads the last one (handlers start with no key rights).
 * - c11: main writes page 0; a C11 thread (thrd_create: thread 3) writes page 2; main then
 *   writes all: page 2 is the C11 thread's. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <threads.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096
#define NB 96 /* pages of each blocks[] array */
#define NH 200
#define NL 4096

static const int ks[4] = {1, 3, 8, 64};
static char *blocks[4], *half, *stride, *sys_arr, *long_arr, *snd, *hnd, *c11arr;
static volatile long seen;

static void on_usr1(int sig) {
    (void)sig;
    seen = hnd[63 * PAGE];
}

static int c11_thread(void *arg) {
    (void)arg;
    c11arr[2 * PAGE] = 5; /* @C11 */
    return 0;
}
static pthread_barrier_t bar;

static void write_blocks(int me) {
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < NB; i++)
            if ((i / ks[b]) % 2 == me - 1) blocks[b][(size_t)i * PAGE] = (char)me; /* @BLOCKS */
}

static long read_all(char *p, int pages) {
    long s = 0;
    for (int i = 0; i < pages; i++) s += p[(size_t)i * PAGE + 7];
    return s;
}

static void *worker(void *arg) {
    const int me = (int)(long)arg;
    long s = 0;
    pthread_barrier_wait(&bar);
    write_blocks(me);
    pthread_barrier_wait(&bar);
    for (int b = 0; b < 4; b++) s += read_all(blocks[b], NB);
    pthread_barrier_wait(&bar); /* half */
    if (me == 1)
        for (int i = 0; i < NH / 2; i++) half[(size_t)i * PAGE] = 1; /* @HALF1 */
    pthread_barrier_wait(&bar);
    if (me == 2)
        for (int i = NH / 2; i < NH; i++) half[(size_t)i * PAGE] = 2; /* @HALF2 */
    pthread_barrier_wait(&bar);                                       /* stride */
    if (me == 1)
        for (int i = 0; i < NH; i += 2) stride[(size_t)i * PAGE] = 1; /* @STRIDE */
    pthread_barrier_wait(&bar);                                       /* syscall */
    if (me == 1) sys_arr[0] = 1;                                      /* @SYS1 */
    pthread_barrier_wait(&bar);
    if (me == 2) {
        int fd = open("/dev/zero", O_RDONLY);
        if (fd < 0 || read(fd, sys_arr + 2 * PAGE, 16) != 16) abort(); /* @SYS2 */
        close(fd);
    }
    pthread_barrier_wait(&bar); /* send */
    if (me == 2)
        for (int i = 0; i < 64; i++) snd[(size_t)i * PAGE] = 2; /* @SEND */
    pthread_barrier_wait(&bar);
    return (void *)s;
}

int main(void) {
    for (int b = 0; b < 4; b++) blocks[b] = malloc((size_t)NB * PAGE); /* @M_BLOCKS */
    half = malloc((size_t)NH * PAGE);                                  /* @M_HALF */
    stride = malloc((size_t)NH * PAGE);                                /* @M_STRIDE */
    sys_arr = malloc((size_t)NH * PAGE);                               /* @M_SYS */
    long_arr = malloc((size_t)NL * PAGE);                              /* @M_LONG */
    snd = malloc(64 * PAGE);                                           /* @M_SEND */
    hnd = malloc(64 * PAGE);                                           /* @M_HND */
    c11arr = malloc(16 * PAGE);                                        /* @M_C11 */
    pthread_barrier_init(&bar, NULL, 3);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* blocks written */
    long s = 0;
    for (int b = 0; b < 4; b++) s += read_all(blocks[b], NB);
    pthread_barrier_wait(&bar); /* half */
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* stride */
    pthread_barrier_wait(&bar);
    for (int i = 0; i < NH; i++) stride[(size_t)i * PAGE + 1] = 3; /* @STRIDE_MAIN */
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    for (int i = 0; i < NH; i++) sys_arr[(size_t)i * PAGE + 1] = 3; /* @SYS_MAIN */
    pthread_barrier_wait(&bar);                                     /* snd written */
    FILE *f = tmpfile();
    if (!f || pwrite(fileno(f), snd, 64 * PAGE, 0) != 64 * PAGE) {
        printf("pwrite of another thread's pages failed\n");
        return 3;
    }
    fclose(f);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 64; i++) hnd[(size_t)i * PAGE] = 6; /* @HND */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0 || raise(SIGUSR1) != 0 || seen != 6) return 4;
    c11arr[0] = 1; /* @C11_MAIN0 */
    thrd_t c;
    if (thrd_create(&c, c11_thread, NULL) != thrd_success || thrd_join(c, NULL) != thrd_success) return 5;
    for (int i = 0; i < 16; i++) c11arr[(size_t)i * PAGE + 1] = 3; /* @C11_REST */
    for (int i = 0; i < NL; i++) long_arr[(size_t)i * PAGE] = 4;   /* @LONG */
    s += read_all(half, NH) + read_all(long_arr, NL);
    printf("ahead %ld\n", s);
    return 0;
}
