/* The Morton schedule without MPI: for P = 1..64 (and a few larger P) every block of
 * the P x P matrix is covered exactly once, every segment has exactly P cells, the
 * segments concatenated follow the Z curve (strictly increasing Morton index, no
 * in-range cell skipped) and equal a brute-force walk over the next power of two. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/engine/morton.h"

static void check_p(uint32_t p) {
    uint32_t n = 1;
    while (n < p) n <<= 1;
    /* brute force: walk the Z curve over n x n, keep in-range cells */
    clampi_coll_cell *walk = malloc(sizeof *walk * (size_t)p * p);
    size_t w = 0;
    for (uint64_t z = 0; z < (uint64_t)n * n; z++) {
        uint32_t r, c;
        clampi_coll_morton_decode(z, &r, &c);
        CHECK_EQ_INT(clampi_coll_morton_encode(r, c), z);
        if (r < p && c < p) walk[w++] = (clampi_coll_cell){r, c};
    }
    CHECK_EQ_INT(w, (uint64_t)p * p);
    unsigned char *seen = calloc((size_t)p * p, 1);
    unsigned char *seen_naive = calloc((size_t)p * p, 1);
    clampi_coll_cell *seg = malloc(sizeof *seg * p);
    uint64_t last = 0;
    for (uint32_t k = 0; k < p; k++) {
        CHECK_EQ_INT(clampi_coll_morton_segment(p, k, seg), p); /* equal segments */
        for (uint32_t i = 0; i < p; i++) {
            CHECK(seg[i].r < p && seg[i].c < p);
            size_t idx = (size_t)seg[i].r * p + seg[i].c;
            CHECK_EQ_INT(seen[idx], 0);
            seen[idx] = 1;
            const clampi_coll_cell *b = &walk[(size_t)k * p + i];
            CHECK(b->r == seg[i].r && b->c == seg[i].c);
            uint64_t z = clampi_coll_morton_encode(seg[i].r, seg[i].c);
            CHECK(k + i == 0 || z > last);
            last = z;
        }
        CHECK_EQ_INT(clampi_coll_naive_segment(p, k, seg), p);
        for (uint32_t i = 0; i < p; i++) {
            CHECK(seg[i].r == k && seg[i].c == i);
            seen_naive[(size_t)k * p + i] = 1;
        }
    }
    for (size_t i = 0; i < (size_t)p * p; i++) CHECK(seen[i] == 1 && seen_naive[i] == 1);
    free(walk);
    free(seen);
    free(seen_naive);
    free(seg);
}

int main(void) {
    /* the paper's Figure 1: P = 8, process 0 takes the top-left 2 x 4 Z-ordered cells */
    clampi_coll_cell s[8];
    clampi_coll_morton_segment(8, 0, s);
    static const uint32_t fig_r[8] = {0, 0, 1, 1, 0, 0, 1, 1}, fig_c[8] = {0, 1, 0, 1, 2, 3, 2, 3};
    for (int i = 0; i < 8; i++) CHECK(s[i].r == fig_r[i] && s[i].c == fig_c[i]);
    for (uint32_t p = 1; p <= 64; p++) check_p(p);
    check_p(100);
    check_p(127);
    check_p(129);
    CHECK_EQ_INT(clampi_coll_morton_segment(0, 0, s), -1);
    CHECK_EQ_INT(clampi_coll_morton_segment(4, 4, s), -1);
    printf("morton schedule: ok\n");
    return 0;
}
