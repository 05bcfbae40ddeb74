/* Memory handles reached over the network with more subscribers than the tables hold (TCP,
 * CLAMPI_MH_SHARE=false): the owner makes two handles, A and B, over one dynamic window;
 * every peer opens WINS windows on each, alternating, and checks through each until it is
 * due to subscribe. A peer's window keeps a copy while its parent has a free entry
 * (CLAMPI_UCX_MH_MIRRORS) and the owner a free record (CLAMPI_UCX_MH_SUBS); the others keep
 * fetching the word. Both tables fill: the owner holds exactly CLAMPI_UCX_MH_SUBS records,
 * one per window with a copy. Releasing A takes back A's records only and clears A's
 * copies: every A window then fails at a flush or at the call (those with a copy fetching
 * nothing) and gives its copy's entry back, which a new window on B then takes; every B
 * window still reads the owner's memory. Half the B windows are freed before B's release:
 * their records go back to the owner. Releasing B ends the rest; freed windows give their
 * entries back. */
#include <stdlib.h>

#include "mpi_util.h"
#include "ucx_probe.h"

#define M 16    /* ints per handle */
#define WINS 40 /* windows per handle and peer: 80 > either table */
#define ROUNDS 12

static clampi_mh_win *mh(CMPI_Win w) {
    const clampi_bwin *b = clampi_test_ucx_window(w);
    return b ? (clampi_mh_win *)clampi_ucx_mh_of(b) : NULL;
}

static clampi_ucx_win *ucx(CMPI_Win w) { return clampi_ucx_of(clampi_test_ucx_window(w)); }

static int records(CMPI_Win parent) {
    const clampi_ucx_win *u = ucx(parent);
    int k = 0;
    for (int j = 0; j < CLAMPI_UCX_MH_SUBS; j++) k += __atomic_load_n(&u->ctl->mh_sub[j], __ATOMIC_ACQUIRE) != 0;
    return k;
}

static int sum(int v) {
    int s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

/* The value at int i of the owner's memory, written before the handles were made. */
static int value(int i) { return 3 * i + 1; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info = ucx_info();
    CMPI_Win dyn = ucx_dynamic_window(info);
    int *mem = malloc(2 * M * sizeof(int));
    for (int i = 0; i < 2 * M; i++) mem[i] = value(i);
    CHECK_EQ_INT(CMPI_Win_attach(dyn, mem, 2 * M * sizeof(int)), MPI_SUCCESS);
    unsigned char h[2][CMPIX_MAX_MEMHANDLE_SIZE];
    int hlen[2] = {0, 0};
    if (rank == 0)
        for (int a = 0; a < 2; a++)
            CHECK_EQ_INT(CMPIX_Memhandle_create(mem + a * M, M * sizeof(int), dyn, h[a], &hlen[a]), MPI_SUCCESS);
    MPI_Bcast(hlen, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h, (int)sizeof h, MPI_BYTE, 0, MPI_COMM_WORLD);

    /* w[2 * i + a]: the i-th window on handle a */
    CMPI_Win w[2 * WINS];
    int copies[2] = {0, 0}, remote = 1;
    if (rank > 0) {
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
        for (int x = 0; x < 2 * WINS; x++) {
            int a = x % 2;
            CHECK_EQ_INT(CMPIX_Win_from_memhandle(h[a], hlen[a], 0, sizeof(int), MPI_INFO_NULL, dyn, &w[x]),
                         MPI_SUCCESS);
            MPI_Win_set_errhandler(w[x].win, MPI_ERRORS_RETURN);
            remote &= mh(w[x])->gen_ptr == NULL;
            for (int r = 0; r < ROUNDS; r++) {
                int got = -1, d = (x + r) % M;
                CHECK_EQ_INT(CMPI_Get(&got, 1, MPI_INT, 0, d, 1, MPI_INT, w[x]), MPI_SUCCESS);
                CHECK_EQ_INT(CMPI_Win_flush(0, w[x]), MPI_SUCCESS);
                CHECK_EQ_INT(got, value(a * M + d));
            }
            copies[a] += mh(w[x])->mirror != 0;
        }
        CHECK(copies[0] + copies[1] <= CLAMPI_UCX_MH_MIRRORS);
        CHECK_EQ_INT(__builtin_popcountll(ucx(dyn)->mh_mirrors_used), copies[0] + copies[1]);
    }
    CHECK(sum(!remote) == 0); /* the test is about peers the word is fetched by */
    const int all_a = sum(copies[0]), all_b = sum(copies[1]);
    if (rank == 0) {
        /* 80 windows per peer: the parent's entries (np 2) or the owner's records fill */
        CHECK_EQ_INT(all_a + all_b, CLAMPI_UCX_MH_SUBS);
        CHECK(all_a > 0 && all_b > 0);
        CHECK_EQ_INT(records(dyn), all_a + all_b);
        CHECK_EQ_INT(CMPIX_Memhandle_release(h[0], dyn), MPI_SUCCESS);
        CHECK_EQ_INT(records(dyn), all_b); /* B's records stay */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        for (int x = 0; x < 2 * WINS; x++) {
            clampi_mh_win *m = mh(w[x]);
            const unsigned before = m->remote_checks;
            const int copy = m->mirror != 0;
            int got = -5;
            if (x % 2 == 0) { /* A: released before the barrier */
                if (copy) CHECK_EQ_INT((long)*m->gen_ptr, 0L);
                /* found dead by a flush (every other one) or at the call */
                if (x % 4 == 2) CHECK_CLASS(CMPI_Win_flush(0, w[x]), MPI_ERR_RMA_RANGE);
                CHECK_CLASS(CMPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, w[x]), MPI_ERR_RMA_RANGE);
                CHECK_EQ_INT(got, -5);
                if (copy) CHECK_EQ_INT((long)m->remote_checks, (long)before);
                /* a dead window holds no copy, nor a pointer into the entries */
                CHECK_EQ_INT(m->mirror, 0);
                const uint64_t *entries = ucx(dyn)->ctl->mh_mirror;
                CHECK(m->gen_ptr == NULL || m->gen_ptr < entries || m->gen_ptr >= entries + CLAMPI_UCX_MH_MIRRORS);
            } else { /* B: live, its copies too */
                if (copy) CHECK_EQ_INT((long)*m->gen_ptr, (long)m->generation);
                CHECK_EQ_INT(CMPI_Get(&got, 1, MPI_INT, 0, x % M, 1, MPI_INT, w[x]), MPI_SUCCESS);
                CHECK_EQ_INT(CMPI_Win_flush(0, w[x]), MPI_SUCCESS);
                CHECK_EQ_INT(got, value(M + x % M));
                if (copy) CHECK_EQ_INT((long)m->remote_checks, (long)before);
            }
        }
    }
    if (rank > 0) {
        /* the dead windows' entries are back, and a new window on B takes one (and one of
         * the records A's release freed), then gives both back at its free */
        CHECK_EQ_INT(__builtin_popcountll(ucx(dyn)->mh_mirrors_used), copies[1]);
        if (copies[0] > 0) {
            CMPI_Win fresh;
            CHECK_EQ_INT(CMPIX_Win_from_memhandle(h[1], hlen[1], 0, sizeof(int), MPI_INFO_NULL, dyn, &fresh),
                         MPI_SUCCESS);
            for (int r = 0; r < ROUNDS; r++) {
                int got = -1;
                CHECK_EQ_INT(CMPI_Get(&got, 1, MPI_INT, 0, r % M, 1, MPI_INT, fresh), MPI_SUCCESS);
                CHECK_EQ_INT(CMPI_Win_flush(0, fresh), MPI_SUCCESS);
                CHECK_EQ_INT(got, value(M + r % M));
            }
            CHECK(mh(fresh)->mirror != 0);
            CHECK_EQ_INT(CMPI_Win_free(&fresh), MPI_SUCCESS);
            CHECK_EQ_INT(__builtin_popcountll(ucx(dyn)->mh_mirrors_used), copies[1]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* every other B window goes before B's release: those with a copy take their records back */
    int freed_b = 0;
    if (rank > 0)
        for (int x = 1; x < 2 * WINS; x += 4) {
            freed_b += mh(w[x])->mirror != 0;
            CHECK_EQ_INT(CMPI_Win_free(&w[x]), MPI_SUCCESS);
        }
    freed_b = sum(freed_b);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(freed_b > 0);
        CHECK_EQ_INT(records(dyn), all_b - freed_b);
        CHECK_EQ_INT(CMPIX_Memhandle_release(h[1], dyn), MPI_SUCCESS);
        CHECK_EQ_INT(records(dyn), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        for (int x = 0; x < 2 * WINS; x++) {
            if (x % 4 == 1) continue; /* freed above */
            int v = 9;
            CHECK_CLASS(CMPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w[x]), MPI_ERR_RMA_RANGE);
            CHECK_EQ_INT(CMPI_Win_free(&w[x]), MPI_SUCCESS);
        }
        CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
        CHECK_EQ_INT((long)ucx(dyn)->mh_mirrors_used, 0L); /* every entry given back */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < 2 * M; i++) CHECK_EQ_INT(mem[i], value(i)); /* nothing written */
        printf("memory-handle copies with full tables: %d on A, %d on B of %d windows\n", all_a, all_b,
               2 * WINS * (n - 1));
    }
    CHECK_EQ_INT(CMPI_Win_detach(dyn, mem), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&dyn), MPI_SUCCESS);
    free(mem);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
