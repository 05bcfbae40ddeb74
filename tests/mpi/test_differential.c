/* Differential test: random sequences of gets (random targets, offsets, sizes 1 B to
 * 1 MiB, predefined, derived and non-contiguous datatypes), puts, flushes,
 * invalidations and epochs (lock_all, lock/unlock, fence) on a clampi window and on a
 * plain MPI window holding the same data; every get's bytes must be identical.
 *
 * Usage: test_differential MODE KIND ROUNDS [SEED]
 *   MODE: transparent | always_cache | user_defined | off
 *   KIND: allocate | create | allocate_nodirect
 * Window layout per rank: a shared region [0, SHARED) that ranks read (and, between
 * read phases, write where the mode allows), then one private slice per rank: rank r
 * writes only slice r (on any target) and only r reads it, so writes by the reader
 * itself are checked in every mode, including always_cache. */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SHARED (2u << 20)
#define SLICE (64u << 10)
#define MAX_GETS 8

static int rank, nranks;
static int reference_wrong; /* MPI's own gets that a re-read showed wrong (verify) */
static uint64_t rng;
static uint64_t rnd(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
}

/* One get in flight on both windows. */
typedef struct pending {
    unsigned char *ref, *got;
    size_t bufsize;
    int ocount, tcount, target;
    MPI_Aint disp;
    MPI_Datatype otype, ttype;
} pending;

static MPI_Datatype t_int4, t_vec, t_ovec;
static void make_types(void) {
    MPI_Type_contiguous(4, MPI_INT, &t_int4);  /* contiguous derived */
    MPI_Type_vector(4, 2, 4, MPI_INT, &t_vec); /* 4 blocks of 8 B, stride 16 B: gaps */
    MPI_Type_commit(&t_int4);
    MPI_Type_commit(&t_vec);
    MPI_Type_vector(2, 4, 8, MPI_INT, &t_ovec); /* 32 data bytes over 48: non-contiguous origin */
    MPI_Type_commit(&t_ovec);
}

/* Picks a random get: target region, size and datatypes. */
static void random_get(pending *p, int private_slice) {
    p->target = (int)(rnd() % nranks);
    uint64_t base = private_slice ? SHARED + (uint64_t)rank * SLICE : 0;
    uint64_t limit = private_slice ? SLICE : SHARED;
    int kind = (int)(rnd() % 6);
    uint64_t max_bytes = rnd() % 50 == 0 ? (1u << 20) : (rnd() % 4 == 0 ? 65536 : 512);
    if (max_bytes > limit) max_bytes = limit;
    uint64_t n = 1 + rnd() % max_bytes;
    int ocount, tcount;
    MPI_Datatype ot, tt;
    uint64_t tspan;
    switch (kind) {
    case 0:
        ot = tt = MPI_BYTE;
        ocount = tcount = (int)n;
        tspan = n;
        break;
    case 1:
        ot = tt = MPI_INT;
        ocount = tcount = (int)((n + 3) / 4);
        tspan = (uint64_t)tcount * 4;
        break;
    case 2:
        ot = tt = MPI_DOUBLE;
        ocount = tcount = (int)((n + 7) / 8);
        tspan = (uint64_t)tcount * 8;
        break;
    case 3:
        ot = tt = t_int4;
        ocount = tcount = (int)((n + 15) / 16);
        tspan = (uint64_t)tcount * 16;
        break;
    case 4:
        tt = t_vec;
        ot = MPI_BYTE;
        tcount = (int)((n + 31) / 32);
        ocount = tcount * 32;
        tspan = (uint64_t)tcount * 56;
        break;
    default:
        tt = MPI_BYTE;
        ot = t_ovec;
        ocount = (int)((n + 31) / 32);
        tcount = ocount * 32;
        tspan = (uint64_t)tcount;
        break;
    }
    if (tspan > limit) { /* shrink to a single small element */
        ot = tt = MPI_BYTE;
        ocount = tcount = 1;
        tspan = 1;
    }
    /* Hot offsets (so gets repeat and overlap) or anywhere. */
    uint64_t off;
    if (rnd() % 4 != 0)
        off = (rnd() % 8) * (limit / 8);
    else
        off = rnd() % (limit - tspan + 1);
    if (off + tspan > limit) off = limit - tspan;
    if (rnd() % 4 == 0 && off + 64 + tspan <= limit) off += rnd() % 64; /* sub-range of a hot block */
    p->disp = (MPI_Aint)(base + off);
    int osize;
    MPI_Aint olb, oext;
    MPI_Type_size(ot, &osize);
    MPI_Type_get_extent(ot, &olb, &oext);
    (void)osize;
    p->bufsize = (size_t)(oext * ocount + 64);
    p->ref = malloc(p->bufsize);
    p->got = malloc(p->bufsize);
    CHECK(p->ref && p->got);
    memset(p->got, 0xee, p->bufsize); /* gaps of non-contiguous origins must stay untouched on both */
    memset(p->ref, 0xee, p->bufsize);
    p->otype = ot;
    p->ttype = tt;
    p->ocount = ocount;
    p->tcount = tcount;
}

static void issue(pending *p, MPI_Win ref, CMPI_Win cw) {
    CHECK(MPI_Get(p->ref, p->ocount, p->otype, p->target, p->disp, p->tcount, p->ttype, ref) == MPI_SUCCESS);
    CHECK(CMPI_Get(p->got, p->ocount, p->otype, p->target, p->disp, p->tcount, p->ttype, cw) == MPI_SUCCESS);
}

/* Origin buffers are freed only once their epoch has ended: MPICH 4.0.2's flush can return
 * before a get has written its buffer, and UCX writes it later, as late as the unlock or
 * fence (tests/mpi_bugs/mpich40_get_completes_after_flush.h). */
static void **deferred;
static size_t n_deferred, cap_deferred;
static void defer_free(void *b) {
#ifdef CLAMPI_REPRO_FREE_AT_FLUSH /* that header's reproducer: free at once, as a program would */
    free(b);
    return;
#endif
    if (n_deferred == cap_deferred) {
        cap_deferred = cap_deferred ? 2 * cap_deferred : 64;
        deferred = realloc(deferred, cap_deferred * sizeof *deferred);
        CHECK(deferred != NULL);
    }
    deferred[n_deferred++] = b;
}
static void free_deferred(void) {
    for (size_t i = 0; i < n_deferred; i++) free(deferred[i]);
    n_deferred = 0;
}

/* MPI's own get read again (nothing writes the range meanwhile: the shared region is
 * written only between phases, a private slice only by its owner before it reads): 1 when
 * the re-read equals clampi's bytes. style 0: inside lock_all; 1: after unlock; 2 (fence):
 * no re-read, a fence is collective. */
static int reread_matches(pending *p, MPI_Win ref, int style) {
    if (style == 2) return 0;
    unsigned char *again = malloc(p->bufsize);
    CHECK(again);
    memset(again, 0xee, p->bufsize);
    if (style == 1) MPI_Win_lock(MPI_LOCK_SHARED, p->target, 0, ref);
    CHECK(MPI_Get(again, p->ocount, p->otype, p->target, p->disp, p->tcount, p->ttype, ref) == MPI_SUCCESS);
    if (style == 1)
        MPI_Win_unlock(p->target, ref);
    else
        MPI_Win_flush(p->target, ref);
    int same = memcmp(again, p->got, p->bufsize) == 0;
    defer_free(again);
    return same;
}

static void verify(pending *p, int n, const char *where, MPI_Win ref, int style) {
    for (int i = 0; i < n; i++) {
        if (memcmp(p[i].ref, p[i].got, p[i].bufsize) != 0) {
            size_t k = 0;
            while (p[i].ref[k] == p[i].got[k]) k++;
            fprintf(stderr,
                    "rank %d: get %d (target %d disp %ld ocount %d tcount %d) differs at byte %zu after %s "
                    "(MPI's byte 0x%02x, clampi's 0x%02x; 0xee: not written)\n",
                    rank, i, p[i].target, (long)p[i].disp, p[i].ocount, p[i].tcount, k, where, p[i].ref[k],
                    p[i].got[k]);
            /* MPICH 4.0.2 under load: its flush returns before its own get has written all
             * of the buffer, and UCX writes the rest later, in a later MPI call
             * (tests/mpi_bugs/mpich40_get_completes_after_flush.h). clampi's bytes are right
             * when MPI's own re-read of the same range gives them. */
            if (reread_matches(&p[i], ref, style)) {
                fprintf(stderr,
                        "rank %d: MPI's own re-read of get %d equals clampi's bytes: the reference get was "
                        "wrong, not clampi's\n",
                        rank, i);
                reference_wrong++;
            } else {
                CHECK(0);
            }
        }
        defer_free(p[i].ref);
        defer_free(p[i].got);
    }
}

/* Writes random bytes at [disp, disp+n) of target on both windows. */
static void write_both(int target, MPI_Aint disp, size_t n, MPI_Win ref, CMPI_Win cw, int accumulate) {
    static unsigned char buf[SLICE];
    for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)rnd();
    if (accumulate) {
        n &= ~(size_t)3;
        if (!n) return;
        CHECK(MPI_Accumulate(buf, (int)n / 4, MPI_INT, target, disp, (int)n / 4, MPI_INT, MPI_REPLACE, ref) ==
              MPI_SUCCESS);
        CHECK(CMPI_Accumulate(buf, (int)n / 4, MPI_INT, target, disp, (int)n / 4, MPI_INT, MPI_REPLACE, cw) ==
              MPI_SUCCESS);
    } else {
        CHECK(MPI_Put(buf, (int)n, MPI_BYTE, target, disp, (int)n, MPI_BYTE, ref) == MPI_SUCCESS);
        CHECK(CMPI_Put(buf, (int)n, MPI_BYTE, target, disp, (int)n, MPI_BYTE, cw) == MPI_SUCCESS);
    }
}

/* One read phase in an epoch style: batches of gets (and own-slice writes) between flushes. */
static void read_phase(MPI_Win ref, CMPI_Win cw, int style, int batches) {
    pending p[MAX_GETS];
    if (style == 0) {
        MPI_Win_lock_all(0, ref);
        CMPI_Win_lock_all(0, cw);
    }
    if (style == 2) {
        MPI_Win_fence(0, ref);
        CMPI_Win_fence(0, cw);
    }
    for (int b = 0; b < batches; b++) {
        int n = 1 + (int)(rnd() % MAX_GETS);
        int own_write = rnd() % 3 == 0;
        int target = (int)(rnd() % nranks);
        if (style == 1) { /* lock/unlock one target per batch: all gets go there */
            MPI_Win_lock(MPI_LOCK_SHARED, target, 0, ref);
            CMPI_Win_lock(MPI_LOCK_SHARED, target, 0, cw);
        }
        if (own_write && style != 2) { /* a write to my slice, completed before reading it back */
            MPI_Aint disp = (MPI_Aint)(SHARED + (uint64_t)rank * SLICE + rnd() % (SLICE / 2));
            write_both(target, disp, 1 + rnd() % 4096, ref, cw, (int)(rnd() % 2));
            if (style == 0) {
                MPI_Win_flush(target, ref);
                CMPI_Win_flush(target, cw);
            } else {
                MPI_Win_flush_all(ref);
                CMPI_Win_flush_all(cw);
            }
        }
        for (int i = 0; i < n; i++) {
            random_get(&p[i], rnd() % 4 == 0);
            if (style == 1) p[i].target = target;
            issue(&p[i], ref, cw);
        }
        if (style == 0) {
            if (rnd() % 2) {
                MPI_Win_flush_all(ref);
                CMPI_Win_flush_all(cw);
            } else
                for (int t = 0; t < nranks; t++) {
                    MPI_Win_flush(t, ref);
                    CMPI_Win_flush(t, cw);
                }
        } else if (style == 1) {
            MPI_Win_unlock(target, ref);
            CMPI_Win_unlock(target, cw);
        } else {
            MPI_Win_fence(0, ref);
            CMPI_Win_fence(0, cw);
        }
        verify(p, n, style == 0 ? "flush" : style == 1 ? "unlock" : "fence", ref, style);
        if (style == 0 && rnd() % 10 == 0) CMPI_Win_flush_all(cw); /* nothing outstanding: elided */
    }
    if (style == 0) {
        MPI_Win_unlock_all(ref);
        CMPI_Win_unlock_all(cw);
    }
    if (style == 2) {
        MPI_Win_fence(0, ref);
        CMPI_Win_fence(0, cw);
    }
    free_deferred();
}

/* Everyone rewrites part of the shared region (disjoint pieces), then the mode's
 * boundary: transparent needs nothing more, user_defined invalidates. */
static void write_phase(MPI_Win ref, CMPI_Win cw, const char *mode) {
    MPI_Win_lock_all(0, ref);
    CMPI_Win_lock_all(0, cw);
    for (int k = 0; k < 4; k++) {
        int target = (int)(rnd() % nranks);
        uint64_t piece = SHARED / (uint64_t)nranks;
        MPI_Aint disp = (MPI_Aint)((uint64_t)rank * piece + rnd() % (piece / 2));
        write_both(target, disp, 1 + rnd() % 8192, ref, cw, 0);
        /* write_both refills one origin buffer: its put must complete before the next
         * (MPI-4.1 12.3; Open MPI 5's osc/rdma reads it late from 4 KiB on) */
        MPI_Win_flush(target, ref);
        CMPI_Win_flush(target, cw);
    }
    MPI_Win_unlock_all(ref);
    CMPI_Win_unlock_all(cw);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, CLAMPI_USER_DEFINED)) CHECK(CMPI_Win_invalidate(cw) == MPI_SUCCESS);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(argc >= 4);
    const char *mode = argv[1], *kind = argv[2];
    int rounds = atoi(argv[3]);
    rng = (argc > 4 ? strtoull(argv[4], NULL, 10) : 12345) + (uint64_t)rank * 7919;
    make_types();

    MPI_Aint size = SHARED + (MPI_Aint)nranks * SLICE;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, mode);
    MPI_Info_set(info, CLAMPI_BUFFER_SIZE, "1M"); /* small: evictions happen */
    MPI_Info_set(info, CLAMPI_INDEX_SIZE, "256");
    if (!strcmp(kind, "allocate_nodirect")) MPI_Info_set(info, CLAMPI_SHM_DIRECT, "false");

    unsigned char *ref_base, *cl_base = NULL;
    MPI_Win ref;
    MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &ref_base, &ref);
    CMPI_Win cw;
    if (!strcmp(kind, "create")) {
        cl_base = malloc((size_t)size);
        CHECK(CMPI_Win_create(cl_base, size, 1, info, MPI_COMM_WORLD, &cw) == MPI_SUCCESS);
    } else {
        CHECK(CMPI_Win_allocate(size, 1, info, MPI_COMM_WORLD, &cl_base, &cw) == MPI_SUCCESS);
    }
    MPI_Info_free(&info);
    /* Same initial contents in both windows. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, ref);
    for (MPI_Aint i = 0; i < size; i++) ref_base[i] = (unsigned char)(i * 131 + rank * 7 + (i >> 9));
    MPI_Win_unlock(rank, ref);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, cw.win);
    memcpy(cl_base, ref_base, (size_t)size);
    MPI_Win_unlock(rank, cw.win);
    MPI_Barrier(MPI_COMM_WORLD);

    int can_write_shared = strcmp(mode, CLAMPI_ALWAYS_CACHE) != 0;
    for (int r = 0; r < rounds; r++) {
        int style = (int)(r % 3);
        read_phase(ref, cw, style, 4);
        MPI_Barrier(MPI_COMM_WORLD);
        if (can_write_shared && r % 2 == 1) write_phase(ref, cw, mode);
        if (!strcmp(mode, CLAMPI_USER_DEFINED) && rnd() % 4 == 0) CMPI_Win_invalidate(cw);
    }
    CMPI_Win_stats s;
    CHECK(CMPI_Win_get_stats(cw, &s) == MPI_SUCCESS);
    CHECK(s.gets > 0);
    CHECK_EQ_INT(s.gets, s.hits + s.inflight_hits + s.misses + s.bypassed + s.direct);
    if (!strcmp(mode, CLAMPI_OFF)) CHECK_EQ_INT(s.hits + s.inflight_hits, 0);
    if (!strcmp(kind, "allocate_nodirect") || !strcmp(kind, "create")) CHECK_EQ_INT(s.direct, 0);
    /* Caching modes over enough rounds do hit (hot offsets repeat). */
    uint64_t served = s.hits + s.inflight_hits, all_served;
    MPI_Allreduce(&served, &all_served, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (strcmp(mode, CLAMPI_OFF) && strcmp(kind, "allocate") && rounds >= 6) CHECK(all_served > 0);
    if (reference_wrong) printf("rank %d: %d of MPI's own reference gets were wrong\n", rank, reference_wrong);
    if (rank == 0)
        printf("differential %s %s np=%d: gets=%llu hits=%llu inflight=%llu misses=%llu bypassed=%llu direct=%llu "
               "evictions=%llu\n",
               mode, kind, nranks, (unsigned long long)s.gets, (unsigned long long)s.hits,
               (unsigned long long)s.inflight_hits, (unsigned long long)s.misses, (unsigned long long)s.bypassed,
               (unsigned long long)s.direct, (unsigned long long)s.evictions);
    CHECK(CMPI_Win_free(&cw) == MPI_SUCCESS);
    if (!strcmp(kind, "create")) free(cl_base);
    MPI_Win_free(&ref);
    MPI_Type_free(&t_int4);
    MPI_Type_free(&t_vec);
    MPI_Type_free(&t_ovec);
    MPI_Finalize();
    return 0;
}
