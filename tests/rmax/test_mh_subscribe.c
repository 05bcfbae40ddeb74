/* Memory handles whose owner is reached over the network (TCP, CLAMPI_MH_SHARE=false: no
 * shared liveness word; across emulated nodes, the peers on other nodes): after CLAMPI_MH_SUBSCRIBE_AFTER (16 by default) fetched liveness
 * words a peer's window keeps a copy of the word, and from then on an operation or a flush
 * fetches nothing from the owner (counted). The owner records each such peer (its control
 * block's mh_sub); a window freed before the release takes its record back. The owner's
 * release clears every copy before it returns: after a barrier every operation through the
 * handle's windows fails at the call with MPI_ERR_RMA_RANGE, fetching nothing, and the
 * owner's memory stays as it was. */
#include <stdlib.h>

#include "mpi_util.h"
#include "ucx_probe.h"

#define N 64
#define OPS 40

static const clampi_mh_win *mh(CMPI_Win w) {
    const clampi_bwin *b = clampi_test_ucx_window(w);
    return b ? clampi_ucx_mh_of(b) : NULL;
}

/* Records in this rank's control block (owner side). */
static int records(CMPI_Win parent) {
    const clampi_ucx_win *u = clampi_ucx_of(clampi_test_ucx_window(parent));
    int k = 0;
    for (int j = 0; j < CLAMPI_UCX_MH_SUBS; j++) k += __atomic_load_n(&u->ctl->mh_sub[j], __ATOMIC_ACQUIRE) != 0;
    return k;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info = ucx_info();
    CMPI_Win dyn = ucx_dynamic_window(info);
    int *mem = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) mem[i] = -1;
    CHECK_EQ_INT(CMPI_Win_attach(dyn, mem, N * sizeof(int)), MPI_SUCCESS);
    unsigned char h[CMPIX_MAX_MEMHANDLE_SIZE];
    int hlen = 0;
    if (rank == 0) CHECK_EQ_INT(CMPIX_Memhandle_create(mem, N * sizeof(int), dyn, h, &hlen), MPI_SUCCESS);
    MPI_Bcast(&hlen, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h, hlen, MPI_BYTE, 0, MPI_COMM_WORLD);

    CMPI_Win mw = {MPI_WIN_NULL, 0, 0}, brief = {MPI_WIN_NULL, 0, 0};
    int remote = 0, nremote = 0;
    if (rank > 0) {
        CHECK_EQ_INT(CMPIX_Win_from_memhandle(h, hlen, 0, sizeof(int), MPI_INFO_NULL, dyn, &mw), MPI_SUCCESS);
        CHECK_EQ_INT(CMPIX_Win_from_memhandle(h, hlen, 0, sizeof(int), MPI_INFO_NULL, dyn, &brief), MPI_SUCCESS);
        MPI_Win_set_errhandler(mw.win, MPI_ERRORS_RETURN);
        CHECK(mh(mw));
        remote = mh(mw)->gen_ptr == NULL; /* nothing shared: the word is fetched */
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
        unsigned at_half = 0;
        for (int i = 0; i < OPS; i++) {
            int v = rank * 1000 + i;
            CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, mw), MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
            if (i == OPS / 2) at_half = mh(mw)->remote_checks;
        }
        /* a copy is kept, and the second half of the stream fetched nothing */
        CHECK_EQ_INT(mh(mw)->mirror != 0, remote);
        if (remote) CHECK_EQ_INT((long)mh(mw)->remote_checks, (long)at_half);
        CHECK(at_half <= 16 + 2); /* the threshold, the subscription's own fetch, a flush's */
        /* the second window subscribes too, and is freed before the release */
        for (int i = 0; i < 20; i++) {
            int got = -9;
            CHECK_EQ_INT(CMPI_Get(&got, 1, MPI_INT, 0, rank, 1, MPI_INT, brief), MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_flush(0, brief), MPI_SUCCESS);
            CHECK_EQ_INT(got, rank * 1000 + OPS - 1);
        }
        CHECK_EQ_INT(mh(brief)->mirror != 0, remote);
        CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_free(&brief), MPI_SUCCESS);
    }
    MPI_Allreduce(&remote, &nremote, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(nremote > 0); /* the test is about peers the word is fetched by */
        for (int r = 1; r < n; r++) CHECK_EQ_INT(mem[r], r * 1000 + OPS - 1);
        CHECK_EQ_INT(records(dyn), nremote); /* the freed windows took theirs back */
        CHECK_EQ_INT(CMPIX_Memhandle_release(h, dyn), MPI_SUCCESS);
        CHECK_EQ_INT(records(dyn), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        /* released before the barrier: the copy says so, nothing is fetched or written */
        unsigned before = mh(mw)->remote_checks;
        if (remote) CHECK_EQ_INT((long)*mh(mw)->gen_ptr, 0L);
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
        int x = 7, got = -5;
        CHECK_CLASS(CMPI_Put(&x, 1, MPI_INT, 0, rank, 1, MPI_INT, mw), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(CMPI_Get(&got, 1, MPI_INT, 0, rank, 1, MPI_INT, mw), MPI_ERR_RMA_RANGE);
        CHECK_EQ_INT(got, -5);
        CHECK_CLASS(CMPI_Win_flush(0, mw), MPI_ERR_RMA_RANGE);
        CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
        if (remote) CHECK_EQ_INT((long)mh(mw)->remote_checks, (long)before);
        CHECK_EQ_INT(CMPI_Win_free(&mw), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 1; r < n; r++) CHECK_EQ_INT(mem[r], r * 1000 + OPS - 1); /* unchanged */
    CHECK_EQ_INT(CMPI_Win_detach(dyn, mem), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&dyn), MPI_SUCCESS);
    free(mem);
    MPI_Info_free(&info);
    if (rank == 0) printf("memory-handle copies: %d of %d peers, released\n", nremote, n - 1);
    MPI_Finalize();
    return 0;
}
