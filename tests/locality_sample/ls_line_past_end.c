/* An allocation whose innermost line lies past its file's end (check_sample.py past_end).
 * addr2line can report such a line for the program's file (binutils 2.40 on some DWARF 5
 * entries of inlined standard-library code); the sampler then takes the caller's line, the
 * first one that exists. Here `#line` makes make_grid's malloc call line 9000 of this
 * short file, so the structure must be named after main's variable, at main's line. */
#include <stdio.h>
#include <stdlib.h>

#define N (64 * 512) /* doubles: 64 pages */

static double *make_grid(size_t n);

int main(void) {
    double *grid = make_grid(N); /* @GRID */
    for (size_t i = 0; i < N; i++) grid[i] = (double)i;
    double s = 0;
    for (size_t i = 0; i < N; i += 512) s += grid[i];
    printf("sum %.0f\n", s);
    free(grid);
    return 0;
}

/* Last in the file: the #line below renumbers everything after it. */
__attribute__((noinline)) static double *make_grid(size_t n) {
#line 9000
    return malloc(n * sizeof(double));
}
