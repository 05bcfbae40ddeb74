/* The shared UCX context: every rank connects a worker to all ranks, puts its rank into
 * every other rank's registered buffer with UCX, and checks what arrived. */
#define CLAMPI_TEST_USES_MPI
#include "services/ucx/context.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    ucp_context_h ctx, ctx2;
    CHECK_EQ_INT(clampi_ucx_context(&ctx), MPI_SUCCESS);
    CHECK_EQ_INT(clampi_ucx_context(&ctx2), MPI_SUCCESS);
    CHECK(ctx == ctx2);
    ucp_worker_h worker;
    CHECK_EQ_INT(clampi_ucx_worker_create(UCS_THREAD_MODE_SERIALIZED, &worker), MPI_SUCCESS);
    ucp_ep_h *eps = calloc((size_t)size, sizeof *eps);
    CHECK_EQ_INT(clampi_ucx_connect(MPI_COMM_WORLD, worker, eps), MPI_SUCCESS);

    /* Register a buffer of one slot per rank and exchange (address, rkey). */
    int64_t *buf = calloc((size_t)size, sizeof *buf);
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = buf,
                               .length = sizeof *buf * (size_t)size};
    ucp_mem_h memh;
    CHECK(ucp_mem_map(ctx, &mp, &memh) == UCS_OK);
    void *rkey_buf;
    size_t rkey_len;
    CHECK(ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len) == UCS_OK);
    int len = (int)rkey_len, maxlen;
    MPI_Allreduce(&len, &maxlen, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    size_t slot = sizeof(uint64_t) + (size_t)maxlen;
    char *mine = calloc(1, slot), *all = calloc((size_t)size, slot);
    uint64_t addr = (uint64_t)(uintptr_t)buf;
    memcpy(mine, &addr, sizeof addr);
    memcpy(mine + sizeof addr, rkey_buf, rkey_len);
    MPI_Allgather(mine, (int)slot, MPI_BYTE, all, (int)slot, MPI_BYTE, MPI_COMM_WORLD);
    ucp_rkey_buffer_release(rkey_buf);

    for (int r = 0; r < size; r++) {
        ucp_rkey_h rkey;
        uint64_t raddr;
        memcpy(&raddr, all + (size_t)r * slot, sizeof raddr);
        CHECK(ucp_ep_rkey_unpack(eps[r], all + (size_t)r * slot + sizeof raddr, &rkey) == UCS_OK);
        int64_t value = 1000 + rank;
        ucp_request_param_t param = {0};
        void *req = ucp_put_nbx(eps[r], &value, sizeof value, raddr + sizeof(int64_t) * (uint64_t)rank, rkey, &param);
        CHECK(clampi_ucx_wait(worker, req) == UCS_OK);
        CHECK(clampi_ucx_wait(worker, ucp_ep_flush_nbx(eps[r], &param)) == UCS_OK);
        ucp_rkey_destroy(rkey);
    }
    /* Over TCP the puts are emulated with messages the target's worker must progress. */
    CHECK_EQ_INT(clampi_ucx_barrier(MPI_COMM_WORLD, worker, NULL), MPI_SUCCESS);
    for (int r = 0; r < size; r++) CHECK_EQ_INT(buf[r], 1000 + r);
    CHECK_EQ_INT(clampi_ucx_barrier(MPI_COMM_WORLD, worker, NULL), MPI_SUCCESS);

    clampi_ucx_disconnect(worker, eps, size);
    CHECK_EQ_INT(clampi_ucx_barrier(MPI_COMM_WORLD, worker, NULL), MPI_SUCCESS);
    ucp_mem_unmap(ctx, memh);
    ucp_worker_destroy(worker);
    free(eps);
    free(buf);
    free(mine);
    free(all);
    MPI_Finalize();
    return 0;
}
