/* The floor under clampi's matched messages: a 1 B ping-pong between ranks 0 and 1 with
 * bare UCX active messages (ucp_am_send_nbx + ucp_worker_progress, one worker per process,
 * the same transports clampi's message layer selects), against the same ping-pong with
 * MPI_Send / MPI_Recv of the MPI library, trials alternating in one run. No matching, no
 * request objects: what UCX alone costs. clampi's messages ride on this, so clampi cannot be
 * faster than the UCX column; where that column is already above the MPI's own latency, the
 * difference is the price of running a second transport beside MPI's.
 *
 *   ucx_floor [iters] [trials] [size]
 * Prints per trial: "floor trial=T mpi_us=X ucx_am_us=Y ratio=Y/X" (one-way latency: half a
 * round trip, as osu_latency reports), then the medians. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define AM_ID 7
static volatile int arrived;

static ucs_status_t on_am(void *arg, const void *header, size_t header_length, void *data, size_t length,
                          const ucp_am_recv_param_t *param) {
    (void)arg, (void)header, (void)header_length, (void)data, (void)length, (void)param;
    arrived++;
    return UCS_OK;
}

static void am_send(ucp_worker_h w, ucp_ep_h ep, const void *buf, size_t n) {
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, AM_ID, NULL, 0, buf, n, &p);
    if (UCS_PTR_IS_PTR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(w);
        ucp_request_free(r);
    }
}

static void am_wait(ucp_worker_h w, int target) {
    while (arrived < target) ucp_worker_progress(w);
}

/* n round trips: rank 0 sends first; *target counts the messages this rank has received. */
static void am_pingpong(ucp_worker_h w, ucp_ep_h ep, int rank, const void *buf, size_t bytes, long n, int *target) {
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            am_send(w, ep, buf, bytes);
            am_wait(w, ++*target);
        } else {
            am_wait(w, ++*target);
            am_send(w, ep, buf, bytes);
        }
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    int trials = argc > 2 ? atoi(argv[2]) : 5;
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 1;
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "ucx_floor: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    /* UCX: context, worker, endpoint to the peer (addresses exchanged over MPI) */
    ucp_params_t cp;
    memset(&cp, 0, sizeof cp);
    cp.field_mask = UCP_PARAM_FIELD_FEATURES;
    cp.features = UCP_FEATURE_AM;
    ucp_config_t *cfg;
    ucp_context_h ctx;
    ucp_worker_h w;
    ucp_config_read(NULL, NULL, &cfg);
    if (ucp_init(&cp, cfg, &ctx) != UCS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    ucp_config_release(cfg);
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof wp);
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(ctx, &wp, &w) != UCS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof hp);
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = AM_ID;
    hp.cb = on_am;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    ucp_worker_set_am_recv_handler(w, &hp);
    ucp_address_t *addr;
    size_t alen;
    ucp_worker_get_address(w, &addr, &alen);
    int mylen = (int)alen, peerlen;
    MPI_Sendrecv(&mylen, 1, MPI_INT, 1 - rank, 0, &peerlen, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    void *peer = malloc((size_t)peerlen);
    MPI_Sendrecv(addr, mylen, MPI_BYTE, 1 - rank, 1, peer, peerlen, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    ucp_ep_params_t ep_p;
    memset(&ep_p, 0, sizeof ep_p);
    ep_p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_p.address = peer;
    ucp_ep_h ep;
    if (ucp_ep_create(w, &ep_p, &ep) != UCS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    /* wire up the endpoint both ways before timing */
    char *buf = calloc(bytes ? bytes : 1, 1);
    int target = 0;
    am_pingpong(w, ep, rank, buf, bytes, 100, &target);
    double *mpi_us = malloc(sizeof(double) * (size_t)trials), *ucx_us = malloc(sizeof(double) * (size_t)trials);
    for (int t = 0; t < trials; t++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        mpi_us[t] = (MPI_Wtime() - t0) * 1e6 / (double)iters / 2;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        am_pingpong(w, ep, rank, buf, bytes, iters, &target);
        ucx_us[t] = (MPI_Wtime() - t0) * 1e6 / (double)iters / 2;
        if (rank == 0)
            printf("floor trial=%d size=%zu mpi_us=%.3f ucx_am_us=%.3f ratio=%.2f\n", t, bytes, mpi_us[t], ucx_us[t],
                   ucx_us[t] / mpi_us[t]);
    }
    qsort(mpi_us, (size_t)trials, sizeof *mpi_us, cmp);
    qsort(ucx_us, (size_t)trials, sizeof *ucx_us, cmp);
    if (rank == 0)
        printf("floor median size=%zu mpi_us=%.3f ucx_am_us=%.3f ratio=%.2f\n", bytes, mpi_us[trials / 2],
               ucx_us[trials / 2], ucx_us[trials / 2] / mpi_us[trials / 2]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* close quietly: the peer may already be gone */
    ucp_request_param_t cl;
    memset(&cl, 0, sizeof cl);
    cl.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    cl.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &cl);
    if (UCS_PTR_IS_PTR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(w);
        ucp_request_free(r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ucp_worker_release_address(w, addr);
    ucp_worker_destroy(w);
    ucp_cleanup(ctx);
    free(peer);
    free(buf);
    free(mpi_us);
    free(ucx_us);
    MPI_Finalize();
    return 0;
}
