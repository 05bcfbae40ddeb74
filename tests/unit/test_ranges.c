/* Range tree against a brute-force list over random operations. */
#include <stdlib.h>
#include <string.h>

#include "cache/ranges.h"
#include "check.h"

enum { N = 2000 };
static struct {
    int live;
    uint32_t t;
    uint64_t s, e;
} ref[N];

static int contains(int i, uint32_t t, uint64_t s, uint64_t e) {
    return ref[i].live && ref[i].t == t && ref[i].s <= s && ref[i].e >= e;
}
static int overlaps(int i, uint32_t t, uint64_t s, uint64_t e) {
    return ref[i].live && ref[i].t == t && ref[i].s < e && ref[i].e > s;
}

int main(void) {
    clampi_ranges r;
    CHECK(clampi_ranges_init(&r, N) == 0);
    uint64_t rng = 7;
#define RND() (rng = rng * 6364136223846793005ull + 1442695040888963407ull, rng >> 33)
    for (int step = 0; step < 100000; step++) {
        int op = (int)(RND() % 4);
        int i = (int)(RND() % N);
        if (op == 0) {
            if (ref[i].live) {
                clampi_ranges_remove(&r, (uint32_t)i);
                ref[i].live = 0;
            } else {
                ref[i].t = (uint32_t)(RND() % 4);
                ref[i].s = RND() % 100000;
                ref[i].e = ref[i].s + 1 + RND() % 3000;
                ref[i].live = 1;
                clampi_ranges_insert(&r, (uint32_t)i, ref[i].t, ref[i].s, ref[i].e);
            }
        } else {
            uint32_t t = (uint32_t)(RND() % 4);
            uint64_t s = RND() % 100000, e = s + 1 + RND() % 500;
            uint32_t id = clampi_ranges_find_containing(&r, t, s, e);
            int any = 0;
            for (int k = 0; k < N; k++) any |= contains(k, t, s, e);
            if (id == CLAMPI_RANGES_NONE)
                CHECK(!any);
            else
                CHECK(contains((int)id, t, s, e));
            uint32_t ids[N];
            size_t n = clampi_ranges_find_overlapping(&r, t, s, e, ids, N);
            size_t expect = 0;
            for (int k = 0; k < N; k++) expect += overlaps(k, t, s, e);
            CHECK_EQ_INT(n, expect);
            for (size_t k = 0; k < n; k++) CHECK(overlaps((int)ids[k], t, s, e));
        }
    }
    /* edge: touching ranges do not overlap, containment is inclusive */
    clampi_ranges_clear(&r);
    clampi_ranges_insert(&r, 0, 1, 100, 200);
    CHECK(clampi_ranges_find_containing(&r, 1, 100, 200) == 0);
    CHECK(clampi_ranges_find_containing(&r, 1, 99, 150) == CLAMPI_RANGES_NONE);
    CHECK(clampi_ranges_find_containing(&r, 0, 100, 150) == CLAMPI_RANGES_NONE);
    uint32_t ids[4];
    CHECK_EQ_INT(clampi_ranges_find_overlapping(&r, 1, 200, 300, ids, 4), 0);
    CHECK_EQ_INT(clampi_ranges_find_overlapping(&r, 1, 199, 300, ids, 4), 1);
    clampi_ranges_destroy(&r);
    puts("ranges: ok");
    return 0;
}
