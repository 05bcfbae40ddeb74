/* CLAMPI_MATCH under the preload: the persistent-request calls. The init calls make one of
 * the message layer's persistent requests (src/msg/persist.c) when clampi would serve the
 * operation (peer a rank, valid arguments), MPI's otherwise (MPI_PROC_NULL, bad input: MPI
 * reports it). */
#include <mpi.h>

#include "clampi/export.h"
#include <stdatomic.h>

#include "pmpi/match_entry.h"

static clampi_mcomm *send_ok(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    return mc && clampi_msg_ok_send(mc, dest, tag) && clampi_msg_ok_buf(buf, count, type) ? mc : NULL;
}

/* A persistent send on clampi's communicator: the carrier's own (the MPI carrier: MPI's on
 * its duplicate, no handle of clampi's), else clampi's (persist.c). */
static int send_init(int kind, int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request) {
    clampi_mcomm *mc = request ? send_ok(buf, count, type, dest, tag, comm) : NULL;
    if (!mc) return CLAMPI_CARRIER_NOT_NATIVE;
    if (mc->ops->entry_send_init) return mc->ops->entry_send_init(mc, buf, count, type, dest, tag, mode, request);
    return clampi_msg_persist_init(kind, buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                             MPI_Request *request) {
    int rc = send_init(CLAMPI_PERSIST_SEND, CLAMPI_SEND_STANDARD, buf, count, type, dest, tag, comm, request);
    return rc != CLAMPI_CARRIER_NOT_NATIVE ? rc : PMPI_Send_init(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *request) {
    int rc = send_init(CLAMPI_PERSIST_SSEND, CLAMPI_SEND_SYNC, buf, count, type, dest, tag, comm, request);
    return rc != CLAMPI_CARRIER_NOT_NATIVE ? rc : PMPI_Ssend_init(buf, count, type, dest, tag, comm, request);
}

/* On an MPI communicator while CLAMPI_MATCH is on: clampi may hold the attached buffer
 * (src/msg/bsend.c), so each start is clampi's buffered send on MPI's communicator, which
 * uses MPI's own buffered send when MPI holds the buffer. Bad arguments go to MPI. */
static int mpi_bsend_ok(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    int inter = 1, size = 0, *ub = NULL, flag = 0;
    if (!atomic_load_explicit(&clampi_pm_enabled, memory_order_relaxed) || comm == MPI_COMM_NULL ||
        !clampi_msg_ok_buf(buf, count, type) || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    return (dest == MPI_PROC_NULL || (dest >= 0 && dest < size)) && tag >= 0 && (!flag || tag <= *ub);
}

CLAMPI_API int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *request) {
    if (request && send_ok(buf, count, type, dest, tag, comm))
        return clampi_msg_persist_init(CLAMPI_PERSIST_BSEND, buf, count, type, dest, tag, comm, request);
    if (request && !clampi_pm_comm(comm) && mpi_bsend_ok(buf, count, type, dest, tag, comm))
        return clampi_msg_persist_init(CLAMPI_PERSIST_BSEND_MPI, buf, count, type, dest, tag, comm, request);
    return PMPI_Bsend_init(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *request) {
    int rc = send_init(CLAMPI_PERSIST_RSEND, CLAMPI_SEND_READY, buf, count, type, dest, tag, comm, request);
    return rc != CLAMPI_CARRIER_NOT_NATIVE ? rc : PMPI_Rsend_init(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                             MPI_Request *request) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (request && mc && clampi_msg_ok_buf(buf, count, type) &&
        (source == MPI_ANY_SOURCE || (source >= 0 && source < mc->size)) &&
        (tag == MPI_ANY_TAG || (tag >= 0 && tag <= mc->tag_ub)))
        return clampi_msg_persist_init(CLAMPI_PERSIST_RECV, buf, count, type, source, tag, comm, request);
    return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
}

CLAMPI_API int MPI_Start(MPI_Request *request) { return clampi_msg_start(request); }

CLAMPI_API int MPI_Startall(int count, MPI_Request requests[]) { return clampi_msg_startall(count, requests); }

/* the hidden names of the int entry points (match_entry.h) */
CLAMPI_PM_INT_ENTRY(Send_init);
CLAMPI_PM_INT_ENTRY(Bsend_init);
CLAMPI_PM_INT_ENTRY(Rsend_init);
CLAMPI_PM_INT_ENTRY(Ssend_init);
CLAMPI_PM_INT_ENTRY(Recv_init);
