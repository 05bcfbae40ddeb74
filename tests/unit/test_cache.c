/* Cache engine: hits, sub-range hits, eviction policy, write invalidation, resize, and
 * a random model check (every hit returns exactly the bytes that were inserted). */
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "check.h"

/* The "remote memory": byte at (target, offset) is a fixed function of both. */
static unsigned char remote_byte(uint32_t t, uint64_t o) { return (unsigned char)(o * 31 + t * 17 + (o >> 8)); }
static void fetch(uint32_t t, uint64_t off, uint64_t len, unsigned char *out) {
    for (uint64_t i = 0; i < len; i++) out[i] = remote_byte(t, off + i);
}
static int matches(uint32_t t, uint64_t off, uint64_t len, const unsigned char *p) {
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != remote_byte(t, off + i)) return 0;
    return 1;
}
static unsigned char tmp[1 << 20];

static void put(clampi_cache *c, uint32_t t, uint64_t off, uint64_t len) {
    fetch(t, off, len, tmp);
    CHECK(clampi_cache_insert(c, t, off, len, tmp) == CLAMPI_CACHE_OK);
}

static void test_hits_and_subranges(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 64, 1 << 16) == CLAMPI_CACHE_OK);
    CHECK(clampi_cache_lookup(&c, 0, 0, 8) == NULL);
    put(&c, 1, 1000, 500);
    const unsigned char *p = clampi_cache_lookup(&c, 1, 1000, 500);
    CHECK(p && matches(1, 1000, 500, p));
    p = clampi_cache_lookup(&c, 1, 1000, 100); /* prefix: index hit */
    CHECK(p && matches(1, 1000, 100, p));
    p = clampi_cache_lookup(&c, 1, 1200, 300); /* inside: range-tree hit */
    CHECK(p && matches(1, 1200, 300, p));
    CHECK_EQ_INT(c.c.subrange_hits, 1);
    CHECK(clampi_cache_lookup(&c, 1, 1200, 301) == NULL); /* one byte past the end */
    CHECK(clampi_cache_lookup(&c, 1, 999, 2) == NULL);
    CHECK(clampi_cache_lookup(&c, 2, 1000, 8) == NULL); /* other target */
    CHECK_EQ_INT(c.c.hits, 3);
    /* a longer range at the same start replaces the shorter one */
    put(&c, 1, 1000, 800);
    CHECK_EQ_INT(c.count, 1);
    CHECK(clampi_cache_lookup(&c, 1, 1700, 100) != NULL);
    /* a range already covered is not added twice */
    put(&c, 1, 1100, 10);
    CHECK_EQ_INT(c.count, 1);
    clampi_cache_destroy(&c);
}

static void test_too_large_changes_nothing(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 64, 4096) == CLAMPI_CACHE_OK);
    put(&c, 0, 0, 100);
    size_t count = c.count, bytes = c.bytes;
    CHECK(clampi_cache_insert(&c, 0, 8192, 5000, tmp) == CLAMPI_CACHE_TOO_LARGE);
    CHECK_EQ_INT(c.count, count);
    CHECK_EQ_INT(c.bytes, bytes);
    CHECK_EQ_INT(c.c.evictions, 0);
    CHECK(clampi_cache_lookup(&c, 0, 0, 100) != NULL);
    clampi_cache_destroy(&c);
}

/* Buffer full: the least recently used entry goes first. */
static void test_capacity_eviction_is_lru(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 64, 4 * 1040) == CLAMPI_CACHE_OK); /* room for 4 entries of 1000 B */
    for (uint64_t i = 0; i < 4; i++) put(&c, 0, i * 1000, 1000);
    CHECK_EQ_INT(c.count, 4);
    CHECK(clampi_cache_lookup(&c, 0, 0, 1000) != NULL); /* entry 0 becomes most recent */
    put(&c, 0, 4000, 1000);                             /* evicts entry 1, the oldest */
    CHECK_EQ_INT(c.c.capacity_evictions, 1);
    CHECK(clampi_cache_lookup(&c, 0, 1000, 1000) == NULL);
    CHECK(clampi_cache_lookup(&c, 0, 0, 1000) != NULL);
    CHECK(clampi_cache_lookup(&c, 0, 2000, 1000) != NULL);
    CHECK(clampi_cache_lookup(&c, 0, 4000, 1000) != NULL);
    clampi_cache_destroy(&c);
}

/* Buffer full and fragmented: the victim is the one whose eviction makes room, not
 * necessarily the oldest, and the cache never evicts more than it needs. */
static void test_capacity_eviction_prefers_room(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 64, 3 * 1040 + 2 * 528) == CLAMPI_CACHE_OK);
    put(&c, 0, 0, 500); /* oldest, small */
    put(&c, 0, 10000, 1000);
    put(&c, 0, 20000, 500);
    put(&c, 0, 30000, 1000);
    put(&c, 0, 40000, 1000);
    CHECK_EQ_INT(c.count, 5);
    put(&c, 0, 50000, 1000); /* needs 1000 B: the oldest (500 B, neighbours used) does not free enough */
    CHECK_EQ_INT(c.c.capacity_evictions, 1);
    CHECK(clampi_cache_lookup(&c, 0, 0, 500) != NULL);      /* oldest small entry kept */
    CHECK(clampi_cache_lookup(&c, 0, 10000, 1000) == NULL); /* oldest entry that made room */
    clampi_cache_destroy(&c);
}

/* Tiny index: conflicts evict the least recently used candidate, nothing is lost silently. */
static void test_conflict_eviction(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 8, 1 << 20) == CLAMPI_CACHE_OK); /* 8 slots */
    for (uint64_t i = 0; i < 100; i++) {
        put(&c, 0, i * 64, 64);
        CHECK(clampi_cache_lookup(&c, 0, i * 64, 64) != NULL); /* the newest is always cached */
    }
    CHECK(c.count <= 8);
    CHECK(c.c.conflict_evictions > 0);
    CHECK_EQ_INT(c.c.evictions, 100 - c.count);
    size_t found = 0;
    for (uint64_t i = 0; i < 100; i++) {
        const unsigned char *p = clampi_cache_lookup(&c, 0, i * 64, 64);
        if (p) {
            CHECK(matches(0, i * 64, 64, p));
            found++;
        }
    }
    CHECK_EQ_INT(found, c.count);
    clampi_cache_destroy(&c);
}

static void test_invalidate_range(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 256, 1 << 20) == CLAMPI_CACHE_OK);
    for (uint64_t i = 0; i < 10; i++) put(&c, 3, i * 100, 100);
    put(&c, 4, 0, 1000);
    CHECK_EQ_INT(clampi_cache_invalidate_range(&c, 3, 250, 200), 3); /* touches [200,300),[300,400),[400,500) */
    CHECK(clampi_cache_lookup(&c, 3, 100, 100) != NULL);
    CHECK(clampi_cache_lookup(&c, 3, 200, 1) == NULL);
    CHECK(clampi_cache_lookup(&c, 3, 400, 100) == NULL);
    CHECK(clampi_cache_lookup(&c, 3, 500, 100) != NULL);
    CHECK(clampi_cache_lookup(&c, 4, 300, 100) != NULL); /* other target untouched */
    CHECK_EQ_INT(clampi_cache_invalidate_range(&c, 3, 0, 100000), 7);
    CHECK_EQ_INT(c.count, 1);
    clampi_cache_invalidate(&c);
    CHECK_EQ_INT(c.count, 0);
    CHECK(clampi_cache_lookup(&c, 4, 300, 100) == NULL);
    put(&c, 4, 0, 1000); /* usable after invalidation */
    CHECK(clampi_cache_lookup(&c, 4, 300, 100) != NULL);
    clampi_cache_destroy(&c);
}

static void test_resize(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 16, 4096) == CLAMPI_CACHE_OK);
    put(&c, 0, 0, 100);
    CHECK(clampi_cache_resize(&c, 1024, 1 << 20) == CLAMPI_CACHE_OK);
    CHECK(c.nentries >= 1024 && c.buffer.capacity == 1 << 20);
    CHECK(clampi_cache_lookup(&c, 0, 0, 100) == NULL); /* a resize may drop data */
    CHECK_EQ_INT(c.c.resizes, 1);
    for (uint64_t i = 0; i < 500; i++) put(&c, 1, i * 1000, 1000);
    CHECK_EQ_INT(c.count, 500);
    CHECK(clampi_cache_resize(&c, 8, (size_t)1 << 62) == CLAMPI_CACHE_NOMEM); /* impossible size */
    CHECK_EQ_INT(c.count, 500);                                               /* old cache stays in force */
    CHECK(clampi_cache_lookup(&c, 1, 499000, 1000) != NULL);
    clampi_cache_destroy(&c);
}

static uint64_t next_rand(uint64_t *rng) {
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    return *rng >> 33;
}

/* Random inserts, lookups and invalidations: every hit is byte-exact. */
static void test_random_model(void) {
    clampi_cache c;
    CHECK(clampi_cache_init(&c, 512, 1 << 18) == CLAMPI_CACHE_OK);
    uint64_t rng = 99;
#define RND() next_rand(&rng)
    uint64_t hits = 0;
    for (int step = 0; step < 300000; step++) {
        uint32_t t = (uint32_t)(RND() % 3);
        uint64_t off = (RND() % 512) * 64;
        if (RND() % 2) off += RND() % 64;
        uint64_t big = RND() % 8 == 0;
        uint64_t len = 1 + RND() % (big ? 20000 : 300);
        int op = (int)(RND() % 100);
        if (op < 50) {
            const unsigned char *p = clampi_cache_lookup(&c, t, off, len);
            if (p) {
                CHECK(matches(t, off, len, p));
                hits++;
            }
        } else if (op < 97) {
            fetch(t, off, len, tmp);
            int rc = clampi_cache_insert(&c, t, off, len, tmp);
            CHECK(rc == CLAMPI_CACHE_OK);
            const unsigned char *p = clampi_cache_lookup(&c, t, off, len);
            CHECK(p && matches(t, off, len, p));
        } else if (op < 99) {
            clampi_cache_invalidate_range(&c, t, off, len);
            CHECK(clampi_cache_lookup(&c, t, off, len) == NULL);
        } else {
            clampi_cache_invalidate(&c);
        }
        CHECK(c.bytes <= c.buffer.capacity && c.count <= c.nentries);
    }
    CHECK(hits > 1000);
    clampi_cache_destroy(&c);
}

int main(void) {
    test_hits_and_subranges();
    test_too_large_changes_nothing();
    test_capacity_eviction_is_lru();
    test_capacity_eviction_prefers_room();
    test_conflict_eviction();
    test_invalidate_range();
    test_resize();
    test_random_model();
    puts("cache: ok");
    return 0;
}
