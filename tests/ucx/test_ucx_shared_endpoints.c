/* UCX windows share the process worker's endpoints (services/ucx/peers.h): one endpoint per
 * peer process, whatever the window's communicator, and worker addresses exchanged only
 * while some rank of a new window's communicator lacks one.
 *
 * Windows on MPI_COMM_WORLD, on a communicator with the ranks reversed and on one of the
 * odd or even ranks (3 rounds, freed in alternating orders): each window's endpoint to a
 * peer is the process worker's endpoint to that peer's MPI_COMM_WORLD rank, the same for
 * every window; after the first window no address is exchanged again. A window with
 * clampi_progress=none makes no endpoint at creation: a put makes only its target's. One
 * with auto on memory UCX allocated makes those to the peers it asks about (all, or
 * CLAMPI_PROGRESS_PROBES of them; fewer if one needs the target CPU), and runs the progress
 * thread exactly when some process of the window reaches some peer without RMA or atomic
 * lanes (asked here of every pair). With argument "tcp0" rank 0 reaches the others over
 * TCP only (UCX_TLS=tcp for its clampi), the others each other over shared memory: with
 * one probe each, rank 1 asks only rank 2 (shared memory) and must still start the thread,
 * because rank 0 reaches it over TCP. Every window's data is checked
 * (puts to the right neighbour in the window's communicator, read back by the target).
 * First of all, a window whose ranks are on workers of different kinds (one with
 * clampi_progress=none, single-threaded; the others multi-threaded) gets endpoints of its
 * own: sharing would have left a table with the address of a worker the later windows do
 * not live on. The process worker's endpoints are the same pointers in every round. */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucx_probe.h"
#include "mpi_util.h"

static clampi_ucx_win *state(CMPI_Win w) {
    const clampi_bwin *b = clampi_test_ucx_window(w);
    CHECK(b != NULL);
    return clampi_ucx_of(b);
}

/* Every endpoint the window holds is the process worker's for that peer. */
static void check_shared(CMPI_Win w, MPI_Comm comm) {
    clampi_ucx_win *u = state(w);
    CHECK(u->world != NULL);
    clampi_ucx_peers *p = &u->main.pw->peers;
    int n;
    MPI_Comm_size(comm, &n);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int t = 0; t < n; t++) {
        int wr;
        MPI_Group_translate_ranks(g, 1, &t, wg, &wr);
        CHECK_EQ_INT(u->world[t], wr);
        if (u->main.eps[t]) CHECK(u->main.eps[t] == p->ep[wr]);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

static int eps_held(CMPI_Win w) {
    clampi_ucx_win *u = state(w);
    int k = 0;
    for (int t = 0; t < u->nranks; t++) k += u->main.eps[t] != NULL;
    return k;
}

/* clampi_progress=auto on window w (see the top): the endpoints made at creation and the
 * agreed progress thread. Returns the agreed answer. */
static int check_auto(CMPI_Win w, MPI_Comm comm) {
    clampi_ucx_win *u = state(w);
    const char *e = getenv("CLAMPI_PROGRESS_PROBES");
    const int probes = e ? atoi(e) : 16, n = u->nranks, k = probes < n - 1 ? probes : n - 1;
    const int held = eps_held(w);
    int needs = !u->mem_one_sided;
    for (int t = 0; t < n && !needs; t++) {
        if (t == u->rank) continue;
        ucp_ep_h ep = clampi_ucx_peers_ep(&u->main.pw->peers, u->world[t]);
        CHECK(ep != NULL);
        needs = !clampi_ucx_ep_one_sided(ep);
    }
    int any = 0;
    MPI_Allreduce(&needs, &any, 1, MPI_INT, MPI_MAX, comm);
    CHECK_EQ_INT(u->watching, any);
    if (!u->mem_one_sided)
        CHECK_EQ_INT(held, 0);
    else if (!any)
        CHECK_EQ_INT(held, k);
    else
        CHECK(held >= (k > 0) && held <= k);
    return any;
}

/* Each rank puts its world rank + 1000 * round into its right neighbour's memory: in a
 * lock_all epoch, or (one_target) locking the neighbour only, then a fence, in which
 * clampi progresses the window's worker (clampi_progress=none over TCP: nothing else
 * would serve the neighbour's unlock). */
static void put_ring(CMPI_Win w, MPI_Comm comm, long *mem, int round, int one_target) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long v = me + 1000L * round;
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    if (one_target) {
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, right, 0, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_unlock(right, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_fence(0, w), MPI_SUCCESS);
    } else {
        CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
        MPI_Barrier(comm);
    }
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int wl;
    MPI_Group_translate_ranks(g, 1, &left, wg, &wl);
    CHECK_EQ_INT(mem[0], wl + 1000L * round);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int tcp0 = argc > 1 && !strcmp(argv[1], "tcp0");
    if (tcp0 && rank == 0) setenv("UCX_TLS", "tcp", 1); /* read when clampi makes its UCX context */
    MPI_Comm comms[3];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* reversed */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]);
    MPI_Info info, lazy, mixed;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    MPI_Info_dup(info, &lazy);
    MPI_Info_set(lazy, "clampi_progress", "none");
    MPI_Info_set(info, "clampi_progress", "auto");
    int provided;
    MPI_Query_thread(&provided);
    const int mt = provided == MPI_THREAD_MULTIPLE; /* then every window is on the multi-threaded worker */

    /* First, before any table knows an address: rank 0's window on the single-threaded
     * worker (clampi_progress=none), the others' on the multi-threaded one. The ranks'
     * tables are of different kinds, so the window gets endpoints of its own, and no table
     * keeps the address of a worker the later windows do not use. */
    MPI_Info_dup(info, &mixed);
    MPI_Info_set(mixed, "clampi_progress", rank == 0 ? "none" : "thread");
    CMPI_Win mw;
    long *mm;
    CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), mixed, MPI_COMM_WORLD, &mm, &mw), MPI_SUCCESS);
    if (!mt && size > 1) CHECK(state(mw)->world == NULL);
    put_ring(mw, MPI_COMM_WORLD, mm, 9, 1);
    CHECK_EQ_INT(CMPI_Win_free(&mw), MPI_SUCCESS);

    uint64_t exchanges_after_first = 0, made_after_first_round = 0;
    ucp_ep_h *first_eps = calloc((size_t)size, sizeof *first_eps);
    CHECK(first_eps != NULL);
    for (int round = 0; round < 3; round++) {
        CMPI_Win w[3];
        long *mem[3];
        for (int c = 0; c < 3; c++) {
            CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, comms[c], &mem[c], &w[c]), MPI_SUCCESS);
            if (round == 0 && c == 0) exchanges_after_first = state(w[0])->main.pw->peers.exchanges;
            int n;
            MPI_Comm_size(comms[c], &n);
            const int thread = check_auto(w[c], comms[c]);
            if (tcp0 && c == 0) {
                CHECK_EQ_INT(thread, 1);
                clampi_ucx_peers *p = &state(w[c])->main.pw->peers;
                /* it asked only rank 2; where UCX reaches it one-sidedly over shared memory
                 * (UCX 1.13; 1.20 offers no "put[" lane there), only the agreement starts
                 * rank 1's thread */
                if (rank == 1 && size == 3 && getenv("CLAMPI_PROGRESS_PROBES") && round == 0) {
                    CHECK(p->direct[2] != 0 && p->direct[0] == 0);
                    if (p->direct[2] < 0) printf("rank 1: shared memory is not one-sided here either\n");
                }
                if (rank == 0) CHECK(!clampi_ucx_ep_one_sided(p->ep[1]));
            }
            check_shared(w[c], comms[c]);
        }
        CHECK(exchanges_after_first >= 1);
        CHECK_EQ_INT((int)state(w[0])->main.pw->peers.exchanges, (int)exchanges_after_first);
        for (int c = 0; c < 3; c++) put_ring(w[c], comms[c], mem[c], round, 0);
        /* the endpoints outlive the windows: the same ones every round, none made again */
        clampi_ucx_peers *p = &state(w[0])->main.pw->peers;
        if (round == 0) {
            made_after_first_round = p->made;
            for (int r = 0; r < size; r++) first_eps[r] = p->ep[r];
            CHECK((int)p->made <= size);
        }
        CHECK_EQ_INT((int)p->made, (int)made_after_first_round);
        for (int r = 0; r < size; r++) CHECK(p->ep[r] == first_eps[r] && (p->ep[r] != NULL || r == rank));
        for (int c = 0; c < 3; c++) CHECK_EQ_INT(CMPI_Win_free(&w[round % 2 ? 2 - c : c]), MPI_SUCCESS);
    }

    /* clampi_progress=none: the other process worker (single-threaded), endpoints at first use */
    CMPI_Win w0;
    long *m0;
    CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &m0, &w0), MPI_SUCCESS);
    CMPI_Win lw;
    long *lmem;
    CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), lazy, comms[1], &lmem, &lw), MPI_SUCCESS);
    clampi_ucx_peers *single = &state(lw)->main.pw->peers;
    const uint64_t lazy_exchanges = single->exchanges, made_before = single->made;
    CHECK_EQ_INT(eps_held(lw), 0);
    if (!mt) CHECK(single != &state(w0)->main.pw->peers && made_before == 0);
    put_ring(lw, comms[1], lmem, 7, 1);
    CHECK_EQ_INT(eps_held(lw), 1); /* the right neighbour's only */
    if (!mt) CHECK_EQ_INT((int)single->made, 1);
    check_shared(lw, comms[1]);
    CMPI_Win lw2;
    long *lmem2;
    CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), lazy, MPI_COMM_WORLD, &lmem2, &lw2), MPI_SUCCESS);
    CHECK_EQ_INT((int)state(lw2)->main.pw->peers.exchanges, (int)lazy_exchanges);
    put_ring(lw2, MPI_COMM_WORLD, lmem2, 8, 1);
    check_shared(lw2, MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_free(&lw), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&lw2), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&w0), MPI_SUCCESS);

    if (rank == 0)
        printf("shared endpoints: %d ranks, address exchanges %llu (first window), %llu (lazy worker)\n", size,
               (unsigned long long)exchanges_after_first, (unsigned long long)lazy_exchanges);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Info_free(&info);
    MPI_Info_free(&lazy);
    MPI_Info_free(&mixed);
    free(first_eps);
    MPI_Finalize();
    return 0;
}
