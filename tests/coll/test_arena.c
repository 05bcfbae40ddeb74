/* The shared heap's allocator without MPI: alignment, no overlap (patterns survive),
 * exhaustion returns NULL, coalescing gives back one block, invariants after every step,
 * bad frees rejected. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/engine/arena.h"

#define N 512

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(void) {
    size_t bytes = (size_t)8 << 20;
    char *mem = malloc(bytes + 100);
    clampi_coll_arena a;
    CHECK_EQ_INT(clampi_coll_arena_init(&a, mem + 3, bytes), 0); /* unaligned start */
    CHECK_EQ_INT(clampi_coll_arena_check(&a), 0);
    size_t whole = clampi_coll_arena_largest_free(&a);
    CHECK(whole > bytes - 256);

    void *p[N] = {0};
    size_t sz[N] = {0};
    unsigned char tag[N] = {0};
    for (int step = 0; step < 200000; step++) {
        int i = (int)(next() % N);
        if (p[i]) {
            for (size_t k = 0; k < sz[i]; k++) CHECK(((unsigned char *)p[i])[k] == tag[i]);
            CHECK_EQ_INT(clampi_coll_arena_free(&a, p[i]), 0);
            p[i] = NULL;
        } else {
            size_t n = (next() & 3) == 0 ? next() % 200000 : next() % 300;
            p[i] = clampi_coll_arena_alloc(&a, n);
            if (p[i]) {
                CHECK(((uintptr_t)p[i] & 63) == 0);
                CHECK(clampi_coll_arena_contains(&a, p[i], n));
                CHECK(clampi_coll_arena_usable(&a, p[i]) >= n);
                sz[i] = n;
                tag[i] = (unsigned char)(next() | 1);
                memset(p[i], tag[i], n);
            }
        }
        if (step % 997 == 0) CHECK_EQ_INT(clampi_coll_arena_check(&a), 0);
    }
    for (int i = 0; i < N; i++)
        if (p[i]) CHECK_EQ_INT(clampi_coll_arena_free(&a, p[i]), 0);
    CHECK_EQ_INT(clampi_coll_arena_check(&a), 0);
    CHECK_EQ_INT(a.in_use, 0);
    CHECK_EQ_INT(clampi_coll_arena_largest_free(&a), whole); /* fully coalesced */

    /* exhaustion: fill with 1 MiB blocks until NULL, then free in an interleaved order */
    void *big[16];
    int nb = 0;
    while (nb < 16 && (big[nb] = clampi_coll_arena_alloc(&a, (size_t)1 << 20)) != NULL) nb++;
    CHECK(nb == 7); /* 8 MiB minus headers: seven 1 MiB blocks fit */
    CHECK(clampi_coll_arena_alloc(&a, whole) == NULL);
    CHECK(clampi_coll_arena_alloc(&a, (size_t)1 << 30) == NULL);
    for (int i = 0; i < nb; i += 2) CHECK_EQ_INT(clampi_coll_arena_free(&a, big[i]), 0);
    CHECK_EQ_INT(clampi_coll_arena_check(&a), 0);
    for (int i = 1; i < nb; i += 2) CHECK_EQ_INT(clampi_coll_arena_free(&a, big[i]), 0);
    CHECK_EQ_INT(clampi_coll_arena_largest_free(&a), whole);

    /* bad frees: double free, interior pointer, foreign pointer */
    void *q = clampi_coll_arena_alloc(&a, 100);
    void *z = clampi_coll_arena_alloc(&a, 0);
    CHECK(q != NULL && z != NULL && z != q);
    CHECK_EQ_INT(clampi_coll_arena_free(&a, (char *)q + 64), -1);
    CHECK_EQ_INT(clampi_coll_arena_free(&a, q), 0);
    CHECK_EQ_INT(clampi_coll_arena_free(&a, q), -1);
    int local;
    CHECK_EQ_INT(clampi_coll_arena_free(&a, &local), -1);
    CHECK_EQ_INT(clampi_coll_arena_free(&a, z), 0);
    CHECK_EQ_INT(clampi_coll_arena_check(&a), 0);
    free(mem);
    printf("arena: ok\n");
    return 0;
}
