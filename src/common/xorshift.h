/* A small, fast pseudo-random sequence (Marsaglia's xorshift64): sampling choices and
 * retry bids, nothing that needs good statistics. The state must not be 0. */
#ifndef CLAMPI_COMMON_XORSHIFT_H
#define CLAMPI_COMMON_XORSHIFT_H
#include <stdint.h>

static inline uint64_t clampi_xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

#endif
