/* A program nobody tuned the sampler for: an OpenMP STREAM-like triad on the heap (three
 * arrays of N doubles from malloc, first touched in parallel, then SWEEPS x 2 parallel
 * sweeps). For overhead.py: plain against clampi-locality run --sample.
 *   triad_omp [N (4M)] [SWEEPS (40)]
 * Prints: triad n=N sweeps=S sum=X sweep_s=T */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    const long n = argc > 1 ? atol(argv[1]) : 4L << 20;
    const int sweeps = argc > 2 ? atoi(argv[2]) : 40;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
    if (!a || !b || !c) return 1;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
    const double t0 = omp_get_wtime();
    for (int s = 0; s < sweeps; s++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) c[i] = a[i] + 3.0 * b[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = c[i] + 0.5 * b[i];
    }
    double sum = 0;
    for (long i = 0; i < n; i += 4096) sum += a[i];
    printf("triad n=%ld sweeps=%d sum=%g sweep_s=%.3f\n", n, sweeps, sum, omp_get_wtime() - t0);
    free(a);
    free(b);
    free(c);
    return 0;
}
