/* Temporary arrays allocated and freed every iteration (LULESH's pattern):
 * the sampler hands a later allocation from the same call site the block freed before
 * (its pages already first-touched, as glibc's reuse would leave them placed), so the
 * run neither faults on fresh pages every iteration nor runs out of page records.
 * calloc'ed blocks are never reused (they must read zero) and a different call site of
 * the same size gets a block of its own. Exit status 2: calloc memory was not zero. */
#include <stdio.h>
#include <stdlib.h>

#define ITERS 200
#define PAGES 16
#define DOUBLES (PAGES * 4096 / sizeof(double))

__attribute__((noinline)) static double step(int it) {
    double *tmp = malloc(PAGES * 4096);                           /* @TMP */
    for (size_t i = 0; i < DOUBLES; i++) tmp[i] = it + (double)i; /* @TOUCH */
    double s = tmp[it];
    free(tmp);
    return s;
}

int main(void) {
    double sum = 0;
    for (int it = 0; it < ITERS; it++) sum += step(it);
    for (int it = 0; it < 8; it++) {
        double *z = calloc(2 * 4096 / sizeof(double), sizeof(double)); /* @ZERO */
        for (size_t i = 0; i < 2 * 4096 / sizeof(double); i++)
            if (z[i] != 0.0) return 2;
        z[it] = 1.0;
        free(z);
    }
    double *other = malloc(PAGES * 4096); /* @OTHER */
    for (size_t i = 0; i < DOUBLES; i++) other[i] = (double)i;
    printf("%f %f\n", sum, other[DOUBLES - 1]);
    free(other);
    return 0;
}
