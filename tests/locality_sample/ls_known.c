/* A threaded program with known first touches and known access counts, for the sampler
 * tests (check_sample.py known). Three threads (0 = main, 1, 2), 8 pages of `grid`:
 * page p is first touched by thread p % 3 at the FIRST-TOUCH line. Then, for argv[2]
 * seconds, after a barrier, the threads run through phases of PHASE_MS (one wall clock, no
 * barriers); in phase k thread t alternates between the two pages of pages[t][k],
 * KACC stores a visit, and counts its visits exactly. Shared pages have a main user:
 * page 3 thread 1 (3 phases of 4; first touched by 0: incorrect), page 4 thread 2
 * (first touched by 1: incorrect), page 5 thread 2 (3 of 4 half-phases; correct), so
 * first-touch correctness is 6/8. Writes the exact counts to argv[1] ("page thread count").
 * Sharing happens at phase granularity (tens of ms), which page-fault sampling resolves;
 * see docs/locality-sampler.md for finer-grained sharing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NPAGES 8
#define PAGE_DOUBLES 512
#define KACC 1024
#define NT 3
#define NPHASE 4
#define PHASE_MS 20

static const int pages[NT][NPHASE][2] = {
    {{3, 0}, {0, 5}, {0, 6}, {6, 0}},
    {{1, 7}, {3, 4}, {3, 1}, {3, 7}},
    {{4, 2}, {2, 5}, {4, 5}, {4, 5}},
};
static double *grid;
static long counts[NT][NPAGES];
static double seconds = 3, start;
static pthread_barrier_t bar;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void visit(int p) {
    volatile double *g = grid + (size_t)p * PAGE_DOUBLES;
    for (int k = 0; k < KACC; k++) g[k & (PAGE_DOUBLES - 1)] = k; /* one store each */
}

static void *run(void *arg) {
    int t = (int)(long)arg;
    for (int p = t; p < NPAGES; p += NT) grid[(size_t)p * PAGE_DOUBLES] = t; /* FIRST-TOUCH */
    for (int p = t; p < NPAGES; p += NT) counts[t][p] = 1;
    pthread_barrier_wait(&bar); /* every first touch before any other access */
    if (t == 0) start = now();
    pthread_barrier_wait(&bar);
    double el;
    while ((el = now() - start) < seconds) {
        int k = (int)(el * 1000 / PHASE_MS) % NPHASE;
        for (int rep = 0; rep < 8; rep++)
            for (int i = 0; i < 2; i++) {
                visit(pages[t][k][i]);
                counts[t][pages[t][k][i]] += KACC;
            }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 2) seconds = atof(argv[2]);
    grid = malloc(NPAGES * 4096); /* ALLOC */
    pthread_barrier_init(&bar, NULL, NT);
    pthread_t th[NT];
    for (long t = 1; t < NT; t++) pthread_create(&th[t], NULL, run, (void *)t);
    run((void *)0);
    for (int t = 1; t < NT; t++) pthread_join(th[t], NULL);
    FILE *f = fopen(argc > 1 ? argv[1] : "expected.txt", "w");
    if (!f) return 1;
    for (int p = 0; p < NPAGES; p++)
        for (int t = 0; t < NT; t++) fprintf(f, "%d %d %ld\n", p, t, counts[t][p]);
    fclose(f);
    free(grid);
    return 0;
}
