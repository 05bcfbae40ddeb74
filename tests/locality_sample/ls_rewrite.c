/* One buffer written to a file again and again while the sampler re-protects its pages
 * (check_sample.py rewrite): every pwrite must write the whole buffer.
 *   ls_rewrite [ROUNDS]
 * The pwrite wrapper opens the buffer's pages, and repeats a write the sampler cut short;
 * a page the sampler was closing while the wrapper opened it must not end up closed with
 * a record that says open (the write then stops short for good). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 2048

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    char *b = malloc((size_t)PAGES * PAGE);
    FILE *f = tmpfile();
    if (!b || !f) return 2;
    memset(b, 1, (size_t)PAGES * PAGE);
    for (int n = 0; n < rounds; n++) {
        /* the program's own accesses: CPU time (the sampler runs a round per period of it) and samples */
        for (int i = 0; i < PAGES; i += 64) b[(size_t)i * PAGE] ^= 1;
        ssize_t r = pwrite(fileno(f), b, (size_t)PAGES * PAGE, 0);
        if (r != (ssize_t)PAGES * PAGE) {
            printf("round %d: pwrite wrote %zd of %d bytes\n", n, r, PAGES * PAGE);
            return 3;
        }
    }
    printf("rewrite %d rounds of %d bytes\n", rounds, PAGES * PAGE);
    return 0;
}
