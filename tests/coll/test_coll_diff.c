/* Differential test of CMPI_Alltoall / CMPI_Allgather (and the forced naive / Morton
 * variants) against the MPI library's MPI_Alltoall / MPI_Allgather: random block sizes
 * (1 B .. 4 MiB, fewer large ones), datatypes (byte, int, double, a contiguous derived
 * type, a non-contiguous vector that must be delegated), MPI_IN_PLACE, sub-communicators
 * (odd/even split, reversed order, a fresh dup freed after use), buffers in the shared
 * heap or not (chosen per rank). Results must match byte for byte, holes included.
 *
 * usage: test_coll_diff [--iters N] [--seed S] [--maxlog L] [--expect direct|staged|delegated|fallback|hier]
 */
#define CLAMPI_TEST_USES_MPI
#include <clampi/coll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t xs(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef struct buf {
    char *p;
    int heap;
} buf;

static buf get(size_t n, int heap) {
    buf b = {NULL, heap};
    if (heap)
        CHECK(CMPI_Alloc_mem((MPI_Aint)(n ? n : 1), MPI_INFO_NULL, &b.p) == MPI_SUCCESS);
    else
        b.p = malloc(n ? n : 1);
    CHECK(b.p != NULL);
    return b;
}

static void put(buf b) {
    if (b.heap)
        CHECK(CMPI_Free_mem(b.p) == MPI_SUCCESS);
    else
        free(b.p);
}

static void fill(char *p, size_t n, uint64_t seed) {
    uint64_t s = seed | 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = xs(&s);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++) p[i] = (char)xs(&s);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int iters = 40, maxlog = 22;
    uint64_t seed = 12345;
    const char *expect = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--maxlog"))
            maxlog = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--expect"))
            expect = argv[i + 1];
    }
    const char *ns = getenv("CLAMPI_NODE_SIZE");
    int node_size = ns ? atoi(ns) : 0;
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(CMPIX_Heap_init(0) == MPI_SUCCESS);

    MPI_Comm comms[3];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[2]);

    MPI_Datatype types[5];
    types[0] = MPI_BYTE;
    types[1] = MPI_INT;
    types[2] = MPI_DOUBLE;
    MPI_Type_contiguous(3, MPI_INT, &types[3]);
    MPI_Type_commit(&types[3]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[4]); /* 8 bytes spread over 12 */
    MPI_Type_commit(&types[4]);
    static const char *tname[5] = {"byte", "int", "double", "contig3int", "vector"};

    uint64_t g = seed * 2654435761u + 7;
    for (int it = 0; it < iters; it++) {
        int op = (int)(xs(&g) % 2);
        int ci = (int)(xs(&g) % 4);
        int ti = (int)(xs(&g) % 5);
        CMPIX_Coll_algo algo = (CMPIX_Coll_algo)(xs(&g) % 3); /* AUTO, MORTON, NAIVE */
        int in_place = xs(&g) % 4 == 0;
        int all_heap = xs(&g) % 2;
        int lg = (int)(xs(&g) % (uint64_t)(maxlog + 1));
        if (lg >= 16 && xs(&g) % 3 != 0) lg = (int)(xs(&g) % 16); /* fewer large blocks */
        size_t want = ((size_t)1 << lg) + (lg > 0 ? xs(&g) % ((size_t)1 << lg) : 0);
        if (want > ((size_t)4 << 20)) want = (size_t)4 << 20;

        MPI_Comm comm = comms[ci < 3 ? ci : 0];
        if (ci == 3) /* a fresh communicator: state created lazily and freed with it */
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        int rank, P;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &P);
        MPI_Datatype t = types[ti];
        int tsize;
        MPI_Aint lb, ext;
        MPI_Type_size(t, &tsize);
        MPI_Type_get_extent(t, &lb, &ext);
        int count = (int)(want / (size_t)tsize);
        if (count == 0) count = xs(&g) % 8 == 0 ? 0 : 1; /* sometimes a zero-byte collective */
        size_t blk = (size_t)count * (size_t)ext;
        size_t slen = op == 0 ? blk * (size_t)P : blk, rlen = blk * (size_t)P;

        uint64_t l = seed ^ ((uint64_t)wrank << 32) ^ (uint64_t)it * 977;
        xs(&l);
        int sh = all_heap || xs(&l) % 2, rh = all_heap || xs(&l) % 2;
        buf sb = get(slen, sh), rb = get(rlen, rh);
        char *ref = malloc(rlen ? rlen : 1);
        fill(sb.p, slen, l + 1);
        if (in_place) {
            fill(rb.p, rlen, l + 2);
            memcpy(ref, rb.p, rlen);
        } else {
            memset(rb.p, 0xEE, rlen);
            memset(ref, 0xEE, rlen);
        }
        const void *s = in_place ? MPI_IN_PLACE : sb.p;
        const void *sref = in_place ? MPI_IN_PLACE : sb.p;
        /* simulated nodes: does comm span several? (then nothing may be shared directly) */
        int spans = 0;
        if (node_size > 0) {
            int nd[2] = {wrank / node_size, -(wrank / node_size)}, mm[2];
            MPI_Allreduce(nd, mm, 2, MPI_INT, MPI_MAX, comm);
            spans = mm[0] != -mm[1];
        }
        CMPIX_Coll_stats before, after;
        CMPIX_Coll_get_stats(&before);
        int err;
        if (op == 0) {
            err = CMPIX_Alltoall_algo(s, count, t, rb.p, count, t, comm, algo);
            CHECK_EQ_INT(err, MPI_SUCCESS);
            MPI_Alltoall(sref, count, t, ref, count, t, comm);
        } else {
            err = CMPIX_Allgather_algo(s, count, t, rb.p, count, t, comm, algo);
            CHECK_EQ_INT(err, MPI_SUCCESS);
            MPI_Allgather(sref, count, t, ref, count, t, comm);
        }
        CMPIX_Coll_get_stats(&after);
        if (spans) /* across simulated nodes: never a shared-memory path */
            CHECK_EQ_INT(after.direct + after.staged + after.eager, before.direct + before.staged + before.eager);
        else
            CHECK_EQ_INT(after.hierarchical, before.hierarchical);
        if (memcmp(rb.p, ref, rlen) != 0) {
            size_t k = 0;
            while (((unsigned char *)rb.p)[k] == ((unsigned char *)ref)[k]) k++;
            fprintf(stderr,
                    "rank %d it %d: %s P=%d type=%s count=%d in_place=%d algo=%d heap s/r=%d/%d: "
                    "byte %zu (block %zu) differs: %02x != %02x\n",
                    wrank, it, op ? "allgather" : "alltoall", P, tname[ti], count, in_place, (int)algo, sh, rh, k,
                    blk ? k / blk : 0, ((unsigned char *)rb.p)[k], ((unsigned char *)ref)[k]);
            CHECK(0);
        }
        put(sb);
        put(rb);
        free(ref);
        if (ci == 3) MPI_Comm_free(&comm);
    }

    CMPIX_Coll_stats st;
    CMPIX_Coll_get_stats(&st);
    CMPIX_Heap_info hi;
    CMPIX_Heap_info_get(&hi);
    if (wrank == 0)
        printf("np=%d iters=%d: direct %lu staged %lu eager %lu hierarchical %lu delegated %lu; heap in use %zu, "
               "fallbacks %lu\n",
               wsize, iters, st.direct, st.staged, st.eager, st.hierarchical, st.delegated, hi.in_use, hi.fallbacks);
    CHECK_EQ_INT(hi.in_use, 0); /* every heap buffer was given back */
    if (expect && !strcmp(expect, "direct")) CHECK(st.direct > 0 && st.staged > 0);
    if (expect && !strcmp(expect, "delegated"))
        CHECK(st.direct == 0 && st.staged == 0 && st.eager == 0 && st.hierarchical == 0);
    if (expect && !strcmp(expect, "hier")) /* simulated nodes: spanning communicators */
        CHECK(st.hierarchical > 0);
    if (expect && !strcmp(expect, "fallback")) CHECK(hi.fallbacks > 0);
    MPI_Type_free(&types[3]);
    MPI_Type_free(&types[4]);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Finalize();
    return 0;
}
