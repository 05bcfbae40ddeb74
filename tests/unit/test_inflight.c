/* In-flight table: fills, duplicate copies, writes over gets in flight, per-target completion. */
#include <string.h>

#include "cache/inflight.h"
#include "check.h"

static int nfills;
static uint64_t last_off, last_len;
static void on_fill(void *ctx, uint32_t t, uint64_t off, uint64_t len, const void *data) {
    (void)ctx;
    (void)t;
    (void)data;
    nfills++;
    last_off = off;
    last_len = len;
}

int main(void) {
    clampi_inflight f;
    CHECK(clampi_inflight_init(&f, 4) == 0);
    unsigned char a[100], b[10], c[10], d[50];
    CHECK(clampi_inflight_find(&f, 1, 0, 1) == CLAMPI_INFLIGHT_NONE);
    uint32_t fa = clampi_inflight_add_fill(&f, 1, 1000, 100, a, 1);
    CHECK(fa != CLAMPI_INFLIGHT_NONE);
    CHECK(clampi_inflight_pending(&f, 1) && !clampi_inflight_pending(&f, 2));
    CHECK(clampi_inflight_find(&f, 1, 1050, 10) == fa);
    CHECK(clampi_inflight_find(&f, 1, 1095, 10) == CLAMPI_INFLIGHT_NONE); /* runs past the fill */
    CHECK(clampi_inflight_find(&f, 2, 1050, 10) == CLAMPI_INFLIGHT_NONE);
    CHECK(clampi_inflight_add_copy(&f, fa, 1050, 10, b) == 0);
    uint32_t fd = clampi_inflight_add_fill(&f, 2, 0, 50, d, 1);
    CHECK(fd != CLAMPI_INFLIGHT_NONE);
    /* The "network" delivers a's bytes; completion copies the duplicate out of them. */
    for (int i = 0; i < 100; i++) a[i] = (unsigned char)i;
    memset(b, 0, sizeof b);
    clampi_inflight_complete(&f, 1, on_fill, NULL);
    CHECK_EQ_INT(nfills, 1);
    CHECK(last_off == 1000 && last_len == 100);
    for (int i = 0; i < 10; i++) CHECK_EQ_INT(b[i], 50 + i);
    CHECK(!clampi_inflight_pending(&f, 1) && clampi_inflight_pending(&f, 2));
    CHECK(clampi_inflight_find(&f, 1, 1050, 10) == CLAMPI_INFLIGHT_NONE);
    CHECK(clampi_inflight_find(&f, 2, 10, 10) == fd);

    /* A write over a fill in flight: it neither serves later gets nor enters the cache. */
    clampi_inflight_forget_overlapping(&f, 2, 49, 1);
    CHECK(clampi_inflight_find(&f, 2, 10, 10) == CLAMPI_INFLIGHT_NONE);
    nfills = 0;
    clampi_inflight_complete_all(&f, on_fill, NULL);
    CHECK_EQ_INT(nfills, 0);
    CHECK_EQ_INT(f.live, 0);

    /* Invalidation: fills complete but are not cached; copies still happen. */
    fa = clampi_inflight_add_fill(&f, 3, 0, 100, a, 1);
    CHECK(clampi_inflight_add_copy(&f, fa, 0, 10, c) == 0);
    clampi_inflight_forget_all(&f);
    CHECK(clampi_inflight_find(&f, 3, 0, 10) == CLAMPI_INFLIGHT_NONE);
    memset(c, 0, sizeof c);
    clampi_inflight_complete(&f, 3, on_fill, NULL);
    CHECK_EQ_INT(nfills, 0);
    CHECK_EQ_INT(c[9], 9);

    /* Many records: the table grows and recycles. */
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 1000; i++)
            CHECK(clampi_inflight_add_fill(&f, i % 4, i * 8, 8, a, 0) != CLAMPI_INFLIGHT_NONE);
        CHECK_EQ_INT(f.live, 1000);
        for (uint32_t t = 0; t < 4; t++) clampi_inflight_complete(&f, t, on_fill, NULL);
        CHECK_EQ_INT(f.live, 0);
    }
    CHECK(f.capacity <= 1024);
    clampi_inflight_destroy(&f);
    puts("inflight: ok");
    return 0;
}
