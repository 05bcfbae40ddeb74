/* The paper's MPIX_ functions on MPI_Win through <clampi/mpix.h>, with only <mpi.h> besides
 * (linked with libclampi_pmpi). np >= 2. Prints "mpix_win: all checks passed" on rank 0.
 * - MPIX_Win_op_intrinsic: a known list answers, an unknown op name is MPI_ERR_ARG;
 * - MPIX_Win_dup_with_info on a UCX window and on an MPI-backend window: put through the
 *   duplicate, synchronized on it, seen through the parent; get_info per handle; freed with
 *   MPI_Win_free; a duplicate whose parent was freed is an MPI window MPI answers for
 *   (MPI_Put to rank 1 of its one-process group: an MPI error, no crash);
 * - memory handles: create on a dynamic window, send, MPIX_Win_from_memhandle at the peer
 *   (an MPI_Win), put/get/fetch-and-op/flush on it, MPI_Win_shared_query on it (a call
 *   clampi does not wrap: MPI's error), MPI_Win_free; garbage handle -> MPI_ERR_ARG,
 *   other target -> MPI_ERR_RANK, own released handle -> MPI_ERR_ARG, a peer's window from
 *   a released handle -> MPI_ERR_RMA_RANGE on put, nothing changed at the owner;
 * - MPIX_Rrput / MPIX_Rraccumulate / MPIX_Rrget_accumulate: the target sees the data after
 *   the requests completed and a message, with no flush or unlock between;
 * - MPIX_Put_notify / MPIX_Win_notify_request. */
#include <mpi.h>
#include <clampi/mpix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, fails;

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "rank %d: check failed at line %d: %s\n", me, __LINE__, #cond); \
            fails++;                                                                        \
        }                                                                                   \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)
static int cls(int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

static MPI_Info ucx_info(const char *k2, const char *v2) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    if (k2) MPI_Info_set(info, k2, v2);
    return info;
}

static void info_is(MPI_Win win, const char *key, const char *value) {
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    OK(MPI_Win_get_info(win, &used));
    MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&used);
    if (!flag || strcmp(v, value)) fprintf(stderr, "rank %d: %s=%s, expected %s\n", me, key, flag ? v : "-", value);
    CHECK(flag && !strcmp(v, value));
}

static void dup_checks(const char *what, MPI_Info info) {
    int *mem;
    MPI_Win win, dup, orphan;
    OK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < 16; i++) mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info ord;
    MPI_Info_create(&ord);
    MPI_Info_set(ord, "mpi_win_order", "true");
    OK(MPIX_Win_dup_with_info(win, ord, &dup));
    MPI_Info_free(&ord);
    CHECK(dup != win && dup != MPI_WIN_NULL);
    int ucx = info != MPI_INFO_NULL;
    info_is(dup, "mpi_win_order", ucx ? "true" : "false");
    info_is(win, "mpi_win_order", "false");
    int right = (me + 1) % np, v = 100 + me;
    OK(MPI_Win_lock_all(0, dup));
    OK(MPI_Put(&v, 1, MPI_INT, right, 5, 1, MPI_INT, dup));
    OK(MPI_Win_unlock_all(dup));
    MPI_Barrier(MPI_COMM_WORLD);
    int got = -2;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    OK(MPI_Get(&got, 1, MPI_INT, me, 5, 1, MPI_INT, win));
    OK(MPI_Win_unlock(me, win));
    if (got != 100 + (me + np - 1) % np) fprintf(stderr, "rank %d: %s dup put: got %d\n", me, what, got);
    CHECK(got == 100 + (me + np - 1) % np);
    OK(MPI_Win_free(&dup));
    CHECK(dup == MPI_WIN_NULL);
    /* a duplicate outliving its parent: an MPI window MPI answers for */
    OK(MPIX_Win_dup_with_info(win, MPI_INFO_NULL, &orphan));
    MPI_Win_set_errhandler(orphan, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
    int rc = MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, orphan);
    CHECK(rc != MPI_SUCCESS);
    OK(MPI_Win_free(&orphan));
}

static void memhandle_checks(void) {
    MPI_Info info = ucx_info(NULL, NULL);
    MPI_Win dyn;
    OK(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &dyn));
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    int flag = -1;
    OK(MPIX_Win_op_intrinsic("sum, cas", 1, MPI_INT64_T, dyn, &flag));
    CHECK(flag == 0 || flag == 1);
    CHECK(cls(MPIX_Win_op_intrinsic("sum,frobnicate", 1, MPI_INT64_T, dyn, &flag)) == MPI_ERR_ARG);
    static int mem[16];
    for (int i = 0; i < 16; i++) mem[i] = 1000 * me + i;
    OK(MPI_Win_attach(dyn, mem, sizeof mem));
    unsigned char h[MPI_MAX_MEMHANDLE_SIZE], peer[MPI_MAX_MEMHANDLE_SIZE];
    int hlen = 0, plen = 0;
    OK(MPIX_Memhandle_create(mem, sizeof mem, dyn, h, &hlen));
    CHECK(hlen > 0 && hlen <= MPI_MAX_MEMHANDLE_SIZE);
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Sendrecv(&hlen, 1, MPI_INT, right, 0, &plen, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(h, hlen, MPI_BYTE, right, 1, peer, plen, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* bad input: nothing created */
    MPI_Win mw = MPI_WIN_NULL;
    unsigned char garbage[MPI_MAX_MEMHANDLE_SIZE];
    memset(garbage, 0x5a, sizeof garbage);
    CHECK(cls(MPIX_Win_from_memhandle(garbage, plen, left, sizeof(int), MPI_INFO_NULL, dyn, &mw)) == MPI_ERR_ARG);
    CHECK(cls(MPIX_Win_from_memhandle(peer, plen, me, sizeof(int), MPI_INFO_NULL, dyn, &mw)) == MPI_ERR_RANK);
    CHECK(mw == MPI_WIN_NULL);
    /* the peer's handle: a window onto the left neighbour's memory */
    OK(MPIX_Win_from_memhandle(peer, plen, left, sizeof(int), MPI_INFO_NULL, dyn, &mw));
    CHECK(mw != MPI_WIN_NULL && mw != dyn);
    MPI_Win_set_errhandler(mw, MPI_ERRORS_RETURN);
    OK(MPI_Win_lock_all(0, dyn));
    int v = 7000 + me, got = -1, old = -1, one = 1;
    OK(MPI_Put(&v, 1, MPI_INT, left, 2, 1, MPI_INT, mw));
    OK(MPI_Win_flush(left, mw));
    OK(MPI_Get(&got, 1, MPI_INT, left, 2, 1, MPI_INT, mw));
    OK(MPI_Win_flush(left, mw));
    CHECK(got == v);
    OK(MPI_Fetch_and_op(&one, &old, MPI_INT, left, 3, MPI_SUM, mw));
    OK(MPI_Win_flush_all(mw));
    CHECK(old == 1000 * left + 3);
    OK(MPI_Win_unlock_all(dyn));
    /* a call clampi does not wrap reaches MPI's one-process window: MPI's error, no crash */
    MPI_Aint qsize;
    int qdu;
    void *qbase;
    CHECK(MPI_Win_shared_query(mw, 1, &qsize, &qdu, &qbase) != MPI_SUCCESS);
    OK(MPI_Win_free(&mw));
    CHECK(mw == MPI_WIN_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[2] == 7000 + right && mem[3] == 1000 * me + 3 + 1);
    /* released handles */
    OK(MPIX_Memhandle_release(h, dyn));
    CHECK(cls(MPIX_Win_from_memhandle(h, hlen, me, sizeof(int), MPI_INFO_NULL, dyn, &mw)) == MPI_ERR_ARG);
    CHECK(cls(MPIX_Memhandle_release(h, dyn)) == MPI_ERR_ARG);
    CHECK(mw == MPI_WIN_NULL);
    MPI_Barrier(MPI_COMM_WORLD); /* every owner released before anyone uses the handle */
    int before = mem[4];
    OK(MPIX_Win_from_memhandle(peer, plen, left, sizeof(int), MPI_INFO_NULL, dyn, &mw));
    MPI_Win_set_errhandler(mw, MPI_ERRORS_RETURN);
    OK(MPI_Win_lock_all(0, dyn));
    int bad = -77;
    CHECK(cls(MPI_Put(&bad, 1, MPI_INT, left, 4, 1, MPI_INT, mw)) == MPI_ERR_RMA_RANGE);
    MPI_Win_flush_all(mw); /* fails the same way: nothing to check */
    OK(MPI_Win_unlock_all(dyn));
    OK(MPI_Win_free(&mw));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[4] == before);
    OK(MPI_Win_detach(dyn, mem));
    OK(MPI_Win_free(&dyn));
}

static void request_and_notify_checks(void) {
    MPI_Info info = ucx_info(NULL, NULL);
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < 16; i++) mem[i] = 10;
    MPI_Barrier(MPI_COMM_WORLD);
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int v = 50 + me, add = 5, res = -1;
    MPI_Request r[3];
    OK(MPI_Win_lock_all(0, win));
    OK(MPIX_Rrput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r[0]));
    OK(MPIX_Rraccumulate(&add, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win, &r[1]));
    OK(MPIX_Rrget_accumulate(&add, 1, MPI_INT, &res, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win, &r[2]));
    OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    CHECK(res == 10);
    /* complete at the target: tell it, no flush or unlock in between */
    int token = 1;
    MPI_Sendrecv_replace(&token, 1, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    volatile int *vm = mem;
    CHECK(vm[0] == 50 + left && vm[1] == 15 && vm[2] == 15);
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* notification: the put's data is there when the request completes */
    MPI_Request nr;
    OK(MPIX_Win_notify_request(win, 5, &nr));
    int payload = 900 + me;
    OK(MPI_Win_lock_all(0, win));
    OK(MPIX_Put_notify(&payload, 1, MPI_INT, right, 7, 1, MPI_INT, 5, win));
    MPI_Status st;
    OK(MPI_Wait(&nr, &st));
    CHECK(vm[7] == 900 + left && st.MPI_SOURCE == left);
    OK(MPI_Win_unlock_all(win));
    CHECK(cls(MPIX_Win_notify_request(win, 5000, &nr)) == MPI_ERR_ARG);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info = ucx_info(NULL, NULL);
    dup_checks("ucx", info);
    MPI_Info_free(&info);
    dup_checks("mpi", MPI_INFO_NULL);
    memhandle_checks();
    request_and_notify_checks();
    /* a window clampi does not know (a duplicate's MPI_Win freed): MPI_ERR_WIN */
    int flag;
    CHECK(cls(MPIX_Win_op_intrinsic("sum", 1, MPI_INT, MPI_WIN_NULL, &flag)) == MPI_ERR_WIN);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf(all ? "mpix_win: %d checks failed\n" : "mpix_win: all checks passed\n", all);
    MPI_Finalize();
    return all != 0;
}
