/* Cache storage allocator: allocation, coalescing, fragmentation. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cache/buffer.h"
#include "check.h"

static void test_alloc_and_bounds(void) {
    clampi_buffer b;
    CHECK(clampi_buffer_init(&b, 4096) == 0);
    CHECK(clampi_buffer_max_request(&b) == 4096 - 16);
    CHECK(clampi_buffer_alloc(&b, 4096) == NULL); /* larger than the region */
    void *all = clampi_buffer_alloc(&b, clampi_buffer_max_request(&b));
    CHECK(all != NULL); /* exactly the region fits */
    CHECK(clampi_buffer_alloc(&b, 1) == NULL);
    clampi_buffer_free(&b, all);
    CHECK(clampi_buffer_largest_free(&b) == 4096 - 16);
    void *p = clampi_buffer_alloc(&b, 1);
    CHECK(p && ((uintptr_t)p % CLAMPI_BUFFER_ALIGN) == 0);
    memset(p, 0xab, 1);
    clampi_buffer_destroy(&b);
}

static void test_coalescing(void) {
    clampi_buffer b;
    CHECK(clampi_buffer_init(&b, 1 << 16) == 0);
    void *a = clampi_buffer_alloc(&b, 1000), *m = clampi_buffer_alloc(&b, 1000), *c = clampi_buffer_alloc(&b, 1000);
    void *tail = clampi_buffer_alloc(&b, 1000); /* keeps a, m, c away from the free end */
    CHECK(a && m && c && tail);
    size_t blocks_before = clampi_buffer_free_blocks(&b);
    clampi_buffer_free(&b, a);
    clampi_buffer_free(&b, c);
    CHECK_EQ_INT(clampi_buffer_free_blocks(&b), blocks_before + 2); /* two separate holes */
    /* Freeing the middle merges all three into one hole. */
    CHECK(clampi_buffer_hole_if_freed(&b, m) >= 3000);
    clampi_buffer_free(&b, m);
    CHECK_EQ_INT(clampi_buffer_free_blocks(&b), blocks_before + 1); /* the merged hole + the free tail */
    void *big = clampi_buffer_alloc(&b, 3000);                      /* fits only in the merged hole */
    CHECK(big == a);
    clampi_buffer_free(&b, big);
    clampi_buffer_free(&b, tail);
    CHECK_EQ_INT(clampi_buffer_free_blocks(&b), 1);
    CHECK_EQ_INT(clampi_buffer_largest_free(&b), clampi_buffer_max_request(&b));
    CHECK_EQ_INT(b.used, 0);
    clampi_buffer_destroy(&b);
}

static void test_fragmentation(void) {
    clampi_buffer b;
    CHECK(clampi_buffer_init(&b, 1 << 20) == 0);
    void *p[600];
    int n = 0;
    while (n < 600 && (p[n] = clampi_buffer_alloc(&b, 2000)) != NULL) n++;
    CHECK(n > 500 && n < 600);                                   /* the buffer is full */
    for (int i = 0; i < n; i += 2) clampi_buffer_free(&b, p[i]); /* every other block */
    /* Half the memory is free, but in 2000-byte holes: a 4000-byte request fails. */
    CHECK(clampi_buffer_largest_free(&b) < 4000);
    CHECK(clampi_buffer_alloc(&b, 4000) == NULL);
    void *q = clampi_buffer_alloc(&b, 2000);
    CHECK(q != NULL); /* a hole is reused */
    clampi_buffer_free(&b, q);
    for (int i = 1; i < n; i += 2) clampi_buffer_free(&b, p[i]);
    CHECK_EQ_INT(clampi_buffer_free_blocks(&b), 1);
    clampi_buffer_destroy(&b);
}

/* Random alloc/free against a shadow: blocks never overlap, all memory comes back. */
static void test_random(void) {
    clampi_buffer b;
    CHECK(clampi_buffer_init(&b, 1 << 18) == 0);
    enum { N = 256 };
    unsigned char *p[N] = {0};
    size_t len[N] = {0};
    uint64_t rng = 42;
    for (int step = 0; step < 200000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((rng >> 33) % N);
        if (p[i]) {
            for (size_t k = 0; k < len[i]; k++) CHECK(p[i][k] == (unsigned char)i);
            clampi_buffer_free(&b, p[i]);
            p[i] = NULL;
        } else {
            len[i] = 1 + (rng >> 40) % 5000;
            p[i] = clampi_buffer_alloc(&b, len[i]);
            if (p[i]) memset(p[i], i, len[i]);
        }
    }
    for (int i = 0; i < N; i++) clampi_buffer_free(&b, p[i]);
    CHECK_EQ_INT(b.used, 0);
    CHECK_EQ_INT(clampi_buffer_free_blocks(&b), 1);
    clampi_buffer_destroy(&b);
}

/* Pages of [p, p + n) the kernel has mapped (mincore). */
static size_t resident_pages(const void *p, size_t n) {
    const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(ps - 1), hi = ((uintptr_t)p + n + ps - 1) & ~(uintptr_t)(ps - 1);
    unsigned char vec[1024];
    size_t pages = (hi - lo) / ps, in = 0;
    CHECK(pages <= sizeof vec);
    CHECK(mincore((void *)lo, hi - lo, vec) == 0);
    for (size_t i = 0; i < pages; i++) in += vec[i] & 1;
    return in;
}
static size_t pages_of(const void *p, size_t n) {
    const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    return (((uintptr_t)p + n + ps - 1) / ps) - ((uintptr_t)p / ps);
}

/* The buffer's pages are mapped at first use; prepare maps, before any write, the ones the
 * next allocations take (the inserts after gets in flight), in order for several. Counted
 * with mincore, not timed. */
static void test_prepare_maps_ahead(void) {
    enum { MB = 1 << 20, LEN = 64 << 10 };
    clampi_buffer b;
    CHECK(clampi_buffer_init(&b, 3 * MB) == 0);
    /* 4 KiB pages however the system's transparent huge pages are set */
    const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)b.base + ps - 1) & ~(uintptr_t)(ps - 1);
    madvise((void *)lo, (((uintptr_t)b.base + b.capacity) & ~(uintptr_t)(ps - 1)) - lo, MADV_NOHUGEPAGE);
    unsigned char *p = clampi_buffer_alloc(&b, 100);
    CHECK(p != NULL);
    memset(p, 0x5a, 100);
    /* The control: memory nobody used is not mapped (the count sees the difference). */
    CHECK_EQ_INT(resident_pages(b.base + 2 * MB, LEN), 0);
    /* Three gets in flight, then their three inserts: all mapped before they are written. */
    size_t blocks = clampi_buffer_free_blocks(&b), largest = clampi_buffer_largest_free(&b);
    size_t mapped = 0;
    for (int i = 0; i < 3; i++) mapped += clampi_buffer_prepare(&b, LEN);
    CHECK(mapped >= 3 * LEN);
    /* Prepare changes nothing the allocator or the blocks hold. */
    CHECK_EQ_INT(clampi_buffer_free_blocks(&b), blocks);
    CHECK_EQ_INT(clampi_buffer_largest_free(&b), largest);
    for (int i = 0; i < 100; i++) CHECK(p[i] == 0x5a);
    void *q[3];
    for (int i = 0; i < 3; i++) {
        q[i] = clampi_buffer_alloc(&b, LEN);
        CHECK(q[i] != NULL);
        CHECK_EQ_INT(resident_pages(q[i], LEN), pages_of(q[i], LEN));
    }
    /* Reused (freed) memory is mapped already: nothing to do. */
    clampi_buffer_free(&b, q[1]);
    CHECK(clampi_buffer_prepare(&b, LEN) == 0);
    CHECK(clampi_buffer_prepare(&b, clampi_buffer_max_request(&b)) == 0); /* no free block that large */
    clampi_buffer_destroy(&b);
}

/* A stream of small inserts into fresh memory asks the kernel to map pages once per chunk
 * (64 KiB; 2 MiB in a region advised for huge pages, which the kernel maps whole anyway),
 * not once per insert: a prepare that maps nothing returns 0 and makes no system call. */
static size_t prepares_that_map(size_t capacity, int inserts) {
    clampi_buffer b;
    CHECK(clampi_buffer_init(&b, capacity) == 0);
    size_t mapping = 0;
    for (int i = 0; i < inserts; i++) {
        mapping += clampi_buffer_prepare(&b, 4096) > 0;
        unsigned char *p = clampi_buffer_alloc(&b, 4096);
        CHECK(p != NULL);
        CHECK_EQ_INT(resident_pages(p, 4096), pages_of(p, 4096)); /* mapped before it is written */
        memset(p, 1, 4096);
    }
    clampi_buffer_destroy(&b);
    return mapping;
}

static void test_prepare_maps_in_chunks(void) {
    size_t small = prepares_that_map((size_t)1 << 20, 200), huge = prepares_that_map((size_t)8 << 20, 400);
    printf("buffer: 200 inserts of 4 KiB into a 1 MiB region mapped in %zu calls, 400 into 8 MiB in %zu\n", small,
           huge);
    CHECK(small >= 1 && small <= 200 * 4112 / (64 << 10) + 1);
    CHECK(huge == 1);
}

int main(void) {
    test_prepare_maps_ahead();
    test_prepare_maps_in_chunks();
    test_alloc_and_bounds();
    test_coalescing();
    test_fragmentation();
    test_random();
    puts("buffer: ok");
    return 0;
}
