/* FNV-1a, 64 bits: the checksum of memory-handle bytes and the fingerprint of packed rkeys. */
#ifndef CLAMPI_COMMON_FNV_H
#define CLAMPI_COMMON_FNV_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t clampi_fnv1a64(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

#endif
