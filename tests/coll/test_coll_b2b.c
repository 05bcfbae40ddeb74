/* Back-to-back collectives, as applications call them: CMPI_Alltoall / CMPI_Allgather
 * (and the forced Morton / naive schedules) in a row with no barrier between calls,
 * rotating over 8 buffer sets, random block sizes (the same on every rank per call),
 * MPI_IN_PLACE, buffers in the shared heap or not (per rank), on MPI_COMM_WORLD and on a
 * split communicator. Every received block is checked against the pattern its sender
 * wrote, and right after the check this rank scribbles over both buffers of the call: a
 * synchronization that lets a rank return while a peer still reads its send data or
 * writes its receive buffer shows up as a wrong block (here or at the peer).
 *
 * usage: test_coll_b2b [--iters N] [--seed S] [--maxlog L] */
#define CLAMPI_TEST_USES_MPI
#include <clampi/coll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { SETS = 8 };

static uint64_t xs(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* byte k of the block that (world) sender s sends to receiver r in call it */
static unsigned char pat(int it, int s, int r, size_t k) {
    return (unsigned char)(it * 131 + s * 31 + r * 7 + (int)(k * 13) + (int)(k >> 8));
}

typedef struct set {
    char *s, *r;
    int heap_s, heap_r;
    size_t cap;
} set;

static char *get(size_t n, int heap) {
    char *p = NULL;
    if (heap)
        CHECK(CMPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p) == MPI_SUCCESS);
    else
        p = malloc(n);
    CHECK(p != NULL);
    return p;
}

static void put(char *p, int heap) {
    if (heap)
        CHECK(CMPI_Free_mem(p) == MPI_SUCCESS);
    else
        free(p);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int iters = 400, maxlog = 15;
    uint64_t seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--maxlog"))
            maxlog = atoi(argv[i + 1]);
    }
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(CMPIX_Heap_init(0) == MPI_SUCCESS);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comms[1]); /* reversed order */
    int *wof[2];                                                  /* world rank of each rank of comms[c] */
    for (int c = 0; c < 2; c++) {
        int P;
        MPI_Comm_size(comms[c], &P);
        wof[c] = malloc(sizeof(int) * (size_t)P);
        MPI_Allgather(&wrank, 1, MPI_INT, wof[c], 1, MPI_INT, comms[c]);
    }

    /* buffers big enough for the largest block, in or out of the heap per rank and set */
    const size_t maxb = (size_t)1 << maxlog;
    uint64_t l = seed * 77 + (uint64_t)wrank * 1000003u + 1;
    set sets[SETS];
    for (int k = 0; k < SETS; k++) {
        sets[k].cap = maxb * (size_t)wsize;
        sets[k].heap_s = (int)(xs(&l) % 4 != 0);
        sets[k].heap_r = (int)(xs(&l) % 4 != 0);
        sets[k].s = get(sets[k].cap, sets[k].heap_s);
        sets[k].r = get(sets[k].cap, sets[k].heap_r);
    }

    uint64_t g = seed * 2654435761u + 3; /* the same on every rank */
    unsigned long checked = 0;
    for (int it = 0; it < iters; it++) {
        int op = (int)(xs(&g) % 2);
        int ci = (int)(xs(&g) % 4 == 0);
        CMPIX_Coll_algo algo = xs(&g) % 4 == 0 ? (CMPIX_Coll_algo)(1 + xs(&g) % 2) : CMPIX_COLL_AUTO;
        int in_place = xs(&g) % 5 == 0;
        int lg = (int)(xs(&g) % (uint64_t)(maxlog + 1));
        if (lg > 11 && xs(&g) % 4 != 0)
            lg = (int)(xs(&g) % 12); /* mostly small blocks: where synchronization dominates */
        size_t B = ((size_t)1 << lg) + (lg > 0 ? xs(&g) % ((size_t)1 << lg) : 0);
        if (B > maxb) B = maxb;
        MPI_Comm comm = comms[ci];
        int me, P;
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &P);
        set *st = &sets[it % SETS];
        /* send data: alltoall block r goes to rank r; allgather one block */
        char *sb = in_place ? st->r : st->s;
        if (op == 0) {
            for (int r = 0; r < P; r++)
                for (size_t k = 0; k < B; k++) sb[(size_t)r * B + k] = (char)pat(it, wrank, wof[ci][r], k);
        } else {
            char *mine = in_place ? st->r + (size_t)me * B : st->s;
            for (size_t k = 0; k < B; k++) mine[k] = (char)pat(it, wrank, 0, k);
        }
        const void *sarg = in_place ? MPI_IN_PLACE : st->s;
        int err = op == 0 ? CMPIX_Alltoall_algo(sarg, (int)B, MPI_BYTE, st->r, (int)B, MPI_BYTE, comm, algo)
                          : CMPIX_Allgather_algo(sarg, (int)B, MPI_BYTE, st->r, (int)B, MPI_BYTE, comm, algo);
        CHECK_EQ_INT(err, MPI_SUCCESS);
        for (int j = 0; j < P; j++)
            for (size_t k = 0; k < B; k++) {
                unsigned char want = pat(it, wof[ci][j], op == 0 ? wrank : 0, k);
                unsigned char got = (unsigned char)st->r[(size_t)j * B + k];
                if (got != want) {
                    fprintf(stderr,
                            "rank %d call %d: %s comm=%d P=%d B=%zu algo=%d in_place=%d heap s/r=%d/%d: block %d "
                            "byte %zu is %02x, sender wrote %02x\n",
                            wrank, it, op ? "allgather" : "alltoall", ci, P, B, (int)algo, in_place, st->heap_s,
                            st->heap_r, j, k, got, want);
                    CHECK(0);
                }
            }
        checked += (size_t)P * B;
        /* the call has returned: this rank owns both buffers again */
        memset(st->s, 0xA5, (size_t)P * B);
        memset(st->r, 0x5A, (size_t)P * B);
    }

    CMPIX_Coll_stats cs;
    CMPIX_Coll_get_stats(&cs);
    if (wrank == 0)
        printf("np=%d calls=%d bytes checked=%lu: direct %lu staged %lu eager %lu hierarchical %lu delegated %lu\n",
               wsize, iters, checked, cs.direct, cs.staged, cs.eager, cs.hierarchical, cs.delegated);
    if (wsize > 1 && getenv("CLAMPI_NODE_SIZE") == NULL) CHECK(cs.eager > 0 && cs.direct > 0);
    for (int k = 0; k < SETS; k++) {
        put(sets[k].s, sets[k].heap_s);
        put(sets[k].r, sets[k].heap_r);
    }
    free(wof[0]);
    free(wof[1]);
    MPI_Comm_free(&comms[1]);
    MPI_Finalize();
    return 0;
}
