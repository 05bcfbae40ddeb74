/* Morton (Z-order) schedule over the P x P block matrix. See morton.h. */
#include "coll/engine/morton.h"

#include <stddef.h>

/* Spreads the low 32 bits of x over the even bit positions. */
static uint64_t spread_bits(uint32_t x) {
    uint64_t v = x;
    v = (v | (v << 16)) & 0x0000FFFF0000FFFFull;
    v = (v | (v << 8)) & 0x00FF00FF00FF00FFull;
    v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0Full;
    v = (v | (v << 2)) & 0x3333333333333333ull;
    v = (v | (v << 1)) & 0x5555555555555555ull;
    return v;
}

static uint32_t compact_bits(uint64_t v) {
    v &= 0x5555555555555555ull;
    v = (v | (v >> 1)) & 0x3333333333333333ull;
    v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0Full;
    v = (v | (v >> 4)) & 0x00FF00FF00FF00FFull;
    v = (v | (v >> 8)) & 0x0000FFFF0000FFFFull;
    v = (v | (v >> 16)) & 0x00000000FFFFFFFFull;
    return (uint32_t)v;
}

uint64_t clampi_coll_morton_encode(uint32_t r, uint32_t c) { return (spread_bits(r) << 1) | spread_bits(c); }

void clampi_coll_morton_decode(uint64_t z, uint32_t *r, uint32_t *c) {
    *r = compact_bits(z >> 1);
    *c = compact_bits(z);
}

/* Number of in-range cells (r < p, c < p) with Morton index < z, counted recursively
 * over quadrants, so finding where segment k starts costs O(log p) per quadrant level
 * instead of walking the whole curve. */
static uint64_t cells_before(uint64_t z, uint32_t p, uint32_t r0, uint32_t c0, uint32_t n, uint64_t zbase) {
    /* the n x n quadrant at (r0, c0) covers Morton indices [zbase, zbase + n*n) */
    if (r0 >= p || c0 >= p || z <= zbase) return 0;
    uint64_t rows = (r0 + n <= p) ? n : p - r0;
    uint64_t cols = (c0 + n <= p) ? n : p - c0;
    if (z >= zbase + (uint64_t)n * n) return rows * cols;
    if (n == 1) return 0; /* z <= zbase handled above; a 1x1 quadrant with z > zbase is full */
    uint32_t h = n / 2;
    uint64_t q = (uint64_t)h * h;
    /* quadrant order along the Z curve: (0,0), (0,1), (1,0), (1,1) in (r, c) halves */
    return cells_before(z, p, r0, c0, h, zbase) + cells_before(z, p, r0, c0 + h, h, zbase + q) +
           cells_before(z, p, r0 + h, c0, h, zbase + 2 * q) + cells_before(z, p, r0 + h, c0 + h, h, zbase + 3 * q);
}

int clampi_coll_morton_segment(uint32_t p, uint32_t k, clampi_coll_cell *out) {
    if (p == 0 || k >= p || out == NULL || p > (1u << 31)) return -1;
    uint32_t n = 1;
    while (n < p) n <<= 1;
    uint64_t nn = (uint64_t)n * n;
    uint64_t first = (uint64_t)k * p; /* rank of the segment's first cell on the curve */
    /* binary search the smallest z with cells_before(z + 1) > first */
    uint64_t lo = 0, hi = nn - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cells_before(mid + 1, p, 0, 0, n, 0) > first)
            hi = mid;
        else
            lo = mid + 1;
    }
    int got = 0;
    for (uint64_t z = lo; z < nn && got < (int)p; z++) {
        uint32_t r, c;
        clampi_coll_morton_decode(z, &r, &c);
        if (r < p && c < p) {
            out[got].r = r;
            out[got].c = c;
            got++;
        }
    }
    return got;
}

int clampi_coll_naive_segment(uint32_t p, uint32_t k, clampi_coll_cell *out) {
    if (p == 0 || k >= p || out == NULL) return -1;
    for (uint32_t c = 0; c < p; c++) {
        out[c].r = k;
        out[c].c = c;
    }
    return (int)p;
}
