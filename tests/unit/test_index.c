/* Cuckoo index: insert, lookup, remove, displacement, conflicts. */
#include <stdlib.h>

#include "cache/index.h"
#include "check.h"

static void test_basic(void) {
    clampi_index x;
    size_t cand[8];
    CHECK(clampi_index_init(&x, 100) == 0);
    CHECK(x.nslots >= 100 && (x.nslots & (x.nslots - 1)) == 0);
    CHECK(clampi_index_lookup(&x, 1, 0) == CLAMPI_INDEX_NONE);
    CHECK(clampi_index_insert(&x, 1, 0, 7, cand) == 0);
    CHECK(clampi_index_insert(&x, 2, 0, 8, cand) == 0); /* same offset, other target */
    CHECK_EQ_INT(clampi_index_lookup(&x, 1, 0), 7);
    CHECK_EQ_INT(clampi_index_lookup(&x, 2, 0), 8);
    CHECK(clampi_index_lookup(&x, 3, 0) == CLAMPI_INDEX_NONE);
    CHECK_EQ_INT(clampi_index_remove(&x, 1, 0), 7);
    CHECK(clampi_index_lookup(&x, 1, 0) == CLAMPI_INDEX_NONE);
    CHECK(clampi_index_remove(&x, 1, 0) == CLAMPI_INDEX_NONE);
    CHECK_EQ_INT(x.count, 1);
    clampi_index_destroy(&x);
}

/* Fill far past what direct placement allows: displacement paths must move keys
 * without losing any, and a conflict must leave the table unchanged. */
static void test_fill_and_conflict(void) {
    clampi_index x;
    size_t cand[8];
    CHECK(clampi_index_init(&x, 1024) == 0);
    int inserted = 0, conflicts = 0;
    for (uint32_t i = 0; i < 1024; i++) {
        if (clampi_index_insert(&x, i % 7, (uint64_t)i * 4096, i, cand) == 0) {
            inserted++;
        } else {
            conflicts++;
            /* candidates are the key's two full buckets */
            for (int k = 0; k < 8; k++) CHECK(x.slots[cand[k]].id != CLAMPI_INDEX_NONE);
        }
        /* everything inserted so far is still found */
        if (i % 64 == 0 || conflicts)
            for (uint32_t j = 0; j <= i; j++) {
                uint32_t id = clampi_index_lookup(&x, j % 7, (uint64_t)j * 4096);
                CHECK(id == CLAMPI_INDEX_NONE || id == j);
            }
    }
    CHECK_EQ_INT((size_t)inserted, x.count);
    /* bucketized cuckoo reaches a high load factor before the first conflict */
    CHECK(inserted > 1024 * 85 / 100);
    int found = 0;
    for (uint32_t j = 0; j < 1024; j++) found += clampi_index_lookup(&x, j % 7, (uint64_t)j * 4096) == j;
    CHECK_EQ_INT(found, inserted);
    clampi_index_destroy(&x);
}

/* Many keys hashing into a tiny table: cycles are detected, never loop forever. */
static void test_tiny_table_cycles(void) {
    clampi_index x;
    size_t cand[8];
    CHECK(clampi_index_init(&x, 8) == 0); /* 2 buckets of 4 */
    int ok = 0;
    for (uint32_t i = 0; i < 100; i++) ok += clampi_index_insert(&x, 0, i, i, cand) == 0;
    CHECK_EQ_INT(ok, 8);
    CHECK_EQ_INT(x.count, 8);
    clampi_index_destroy(&x);
}

int main(void) {
    test_basic();
    test_fill_and_conflict();
    test_tiny_table_cycles();
    puts("index: ok");
    return 0;
}
