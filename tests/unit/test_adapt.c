/* Adaptive sizing policy, without MPI: a too-small index grows on conflicts, a too-small
 * buffer grows on capacity evictions and on gets too large to cache, an oversized cache
 * shrinks only after several steady periods, sizes stay within the limits, and a resize
 * keeps the cached bytes correct. */
#include <string.h>

#include "cache/adapt.h"
#include "check.h"

static unsigned char remote_byte(uint32_t t, uint64_t o) { return (unsigned char)(o * 13 + t * 7 + (o >> 9)); }
static unsigned char tmp[1 << 20];

/* One "get" through the cache: lookup, insert on a miss, verify the bytes. */
static void access(clampi_cache *c, uint32_t t, uint64_t off, uint64_t len) {
    const unsigned char *p = clampi_cache_lookup(c, t, off, len);
    if (!p) {
        for (uint64_t i = 0; i < len; i++) tmp[i] = remote_byte(t, off + i);
        if (len > clampi_cache_max_entry(c))
            clampi_cache_note_too_large(c, len);
        else
            clampi_cache_insert(c, t, off, len, tmp);
        return;
    }
    for (uint64_t i = 0; i < len; i++) CHECK(p[i] == remote_byte(t, off + i));
}

static const clampi_adapt_limits lim = {16, 1 << 16, 4096, 64 << 20, 256, 4};

static void test_small_index_grows(void) {
    clampi_cache c;
    clampi_adapt a;
    CHECK(clampi_cache_init(&c, 16, 8 << 20) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &lim, &c);
    /* 2000 distinct 8-byte keys, cycled: conflicts until the index holds them all */
    for (int round = 0; round < 20; round++)
        for (uint64_t k = 0; k < 2000; k++) {
            access(&c, (uint32_t)(k % 3), k * 64, 8);
            clampi_adapt_step(&a, &c, 0);
        }
    CHECK(a.grows > 0);
    CHECK_EQ_INT(a.shrinks, 0);
    CHECK(c.nentries >= 2000);
    CHECK_EQ_INT(c.c.resizes, a.grows);
    /* converged: the last round is all hits */
    uint64_t missed = c.c.lookups_missed;
    for (uint64_t k = 0; k < 2000; k++) access(&c, (uint32_t)(k % 3), k * 64, 8);
    CHECK_EQ_INT(c.c.lookups_missed, missed);
    clampi_cache_destroy(&c);
}

static void test_small_buffer_grows(void) {
    clampi_cache c;
    clampi_adapt a;
    CHECK(clampi_cache_init(&c, 4096, 16 << 10) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &lim, &c);
    for (int round = 0; round < 20; round++)
        for (uint64_t k = 0; k < 300; k++) {
            access(&c, 0, k * 4096, 1000);
            clampi_adapt_step(&a, &c, 0);
        }
    CHECK(c.buffer.capacity >= 300 * 1000);
    CHECK(c.c.capacity_evictions > 0);
    uint64_t missed = c.c.lookups_missed;
    for (uint64_t k = 0; k < 300; k++) access(&c, 0, k * 4096, 1000);
    CHECK_EQ_INT(c.c.lookups_missed, missed);
    clampi_cache_destroy(&c);
}

static void test_too_large_grows_buffer(void) {
    clampi_cache c;
    clampi_adapt a;
    CHECK(clampi_cache_init(&c, 64, 8192) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &lim, &c);
    for (int i = 0; i < 600; i++) {
        access(&c, 1, (uint64_t)(i % 4) * 100000, 50000);
        clampi_adapt_step(&a, &c, 0);
    }
    CHECK(clampi_cache_max_entry(&c) >= 50000);
    CHECK(c.nentries > 64); /* index follows the buffer at the mean get size */
    CHECK(c.count == 4);
    clampi_cache_destroy(&c);
}

static void test_oversized_shrinks_with_hysteresis(void) {
    clampi_cache c;
    clampi_adapt a;
    CHECK(clampi_cache_init(&c, 1 << 16, 64 << 20) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &lim, &c);
    size_t idx0 = c.nentries;
    /* 10 hot entries, all hits after the first round */
    int shrunk_at = -1;
    for (int i = 0; i < 256 * 8; i++) {
        access(&c, 0, (uint64_t)(i % 10) * 128, 64);
        if (clampi_adapt_step(&a, &c, 0) == CLAMPI_ADAPT_SHRINK && shrunk_at < 0) shrunk_at = i;
    }
    CHECK(shrunk_at >= 256 * 4 - 1); /* not before quiet_periods steady periods */
    CHECK(a.shrinks >= 1);
    CHECK(c.nentries < idx0);
    CHECK(c.nentries >= lim.min_index && c.buffer.capacity >= lim.min_buffer);
    CHECK_EQ_INT(c.count, 10); /* entries survived the shrink */
    uint64_t missed = c.c.lookups_missed;
    for (int i = 0; i < 10; i++) access(&c, 0, (uint64_t)i * 128, 64);
    CHECK_EQ_INT(c.c.lookups_missed, missed);
    clampi_cache_destroy(&c);
}

/* At an epoch end (invalidation) an oversized cache shrinks at once, for free; an epoch
 * with evictions or too few lookups does not shrink it. */
static void test_epoch_end_shrinks(void) {
    clampi_cache c;
    clampi_adapt a;
    CHECK(clampi_cache_init(&c, 1 << 16, 64 << 20) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &lim, &c);
    for (int i = 0; i < 20; i++) access(&c, 0, (uint64_t)i * 128, 64);
    CHECK_EQ_INT(clampi_adapt_step(&a, &c, 1), CLAMPI_ADAPT_KEEP); /* 20 lookups: too few */
    for (int i = 0; i < 100; i++) access(&c, 0, (uint64_t)(i % 40) * 128, 64);
    CHECK_EQ_INT(clampi_adapt_step(&a, &c, 1), CLAMPI_ADAPT_SHRINK);
    CHECK(c.nentries < (1 << 16) && c.buffer.capacity < (64 << 20));
    CHECK(c.nentries >= 4 * 40 && c.buffer.capacity >= 4 * 40 * 64);
    CHECK_EQ_INT(c.count, 0); /* emptied: the caller invalidates */
    CHECK_EQ_INT(a.shrinks, 1);
    clampi_cache_destroy(&c);
}

static void test_limits_and_decide_is_stable(void) {
    clampi_cache c;
    clampi_adapt a;
    clampi_adapt_limits tight = {16, 64, 4096, 8192, 64, 2};
    CHECK(clampi_cache_init(&c, 16, 4096) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &tight, &c);
    for (int i = 0; i < 20000; i++) {
        access(&c, 0, (uint64_t)(i % 5000) * 512, 256);
        clampi_adapt_step(&a, &c, 0);
        CHECK(c.nentries <= 64 && c.buffer.capacity <= 8192);
    }
    /* a period with nothing going on: KEEP */
    size_t ix, bb;
    a.last = c.c;
    CHECK_EQ_INT(clampi_adapt_decide(&a, &c, &ix, &bb), CLAMPI_ADAPT_KEEP);
    CHECK_EQ_INT(ix, c.nentries);
    CHECK_EQ_INT(bb, c.buffer.capacity);
    clampi_cache_destroy(&c);
}

static void test_resize_keep_and_drop(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 64, 1 << 16) == CLAMPI_CACHE_OK);
    for (uint64_t k = 0; k < 40; k++) access(&c, 2, k * 1000, 100 + k);
    CHECK(clampi_cache_resize_keep(&c, 1024, 1 << 20) == CLAMPI_CACHE_OK);
    CHECK_EQ_INT(c.count, 40);
    CHECK_EQ_INT(c.c.inserts, 40); /* moving is not inserting */
    for (uint64_t k = 0; k < 40; k++) CHECK(clampi_cache_lookup(&c, 2, k * 1000, 100 + k) != NULL);
    /* shrinking below the content keeps the most recent entries only */
    CHECK(clampi_cache_resize_keep(&c, 8, 1 << 16) == CLAMPI_CACHE_OK);
    CHECK(c.count <= 8);
    CHECK(clampi_cache_lookup(&c, 2, 39 * 1000, 139) != NULL);
    CHECK(clampi_cache_resize(&c, 64, 1 << 16) == CLAMPI_CACHE_OK);
    CHECK_EQ_INT(c.count, 0);
    CHECK_EQ_INT(c.c.resizes, 3);
    clampi_cache_destroy(&c);
}

/* A stream of gets that never come back evicts on every insert once the buffer is full,
 * but a larger cache would serve none of them: the sizes stay, no miss counts as a
 * capacity or conflict miss. Then the same cache meets a working set that does come
 * back (twice the buffer): it grows. */
static void test_stream_never_grows(void) {
    clampi_cache c;
    clampi_adapt a;
    CHECK(clampi_cache_init(&c, 1024, 64 << 10) == CLAMPI_CACHE_OK);
    clampi_adapt_init(&a, &lim, &c);
    for (uint64_t k = 0; k < 20000; k++) {
        access(&c, (uint32_t)(k % 2), k * 8192, 4096);
        clampi_adapt_step(&a, &c, 0);
    }
    CHECK(c.c.capacity_evictions > 10000);
    CHECK_EQ_INT(c.c.capacity_misses, 0);
    CHECK_EQ_INT(c.c.conflict_misses, 0);
    CHECK_EQ_INT(a.grows, 0);
    CHECK_EQ_INT(c.nentries, 1024);
    CHECK_EQ_INT(c.buffer.capacity, 64 << 10);
    for (int round = 0; round < 10; round++)
        for (uint64_t k = 0; k < 32; k++) {
            access(&c, 0, (1ull << 40) + k * 8192, 4096);
            clampi_adapt_step(&a, &c, 0);
        }
    CHECK(c.c.capacity_misses > 0);
    CHECK(a.grows > 0);
    CHECK(c.buffer.capacity >= 32 * 4096);
    clampi_cache_destroy(&c);
}

int main(void) {
    test_stream_never_grows();
    test_small_index_grows();
    test_small_buffer_grows();
    test_too_large_grows_buffer();
    test_oversized_shrinks_with_hysteresis();
    test_epoch_end_shrinks();
    test_limits_and_decide_is_stable();
    test_resize_keep_and_drop();
    return 0;
}
