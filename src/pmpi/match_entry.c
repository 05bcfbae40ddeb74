/* CLAMPI_MATCH under the preload: MPI's point-to-point calls. On a clampi communicator
 * (match_comm.c) a send or receive goes to its carrier's table (src/msg/carrier_ops.h):
 * the UCX carrier takes what clampi can serve through the CMPIX_ calls and leaves
 * MPI_PROC_NULL and bad input to MPI's own call (MPI's exact behaviour and error class);
 * the MPI carrier hands everything to MPI on its duplicate. Another communicator's calls
 * go to MPI's own.
 * Requests are clampi's: the completion calls (src/msg/mpi_entry.c -> complete.c) take any
 * mix of them and MPI's. */
#include <mpi.h>

#include "clampi/export.h"
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "common/datatype.h"
#include "pmpi/match_entry.h"
#include "pmpi/match_profile.h"

/* clampi's communicator when clampi serves this buffered send (the message layer's checks) */
static clampi_mcomm *send_route(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    return mc && clampi_msg_ok_send(mc, dest, tag) && clampi_msg_ok_buf(buf, count, type) ? mc : NULL;
}

/* Synchronous and ready sends: the communicator's carrier takes them (carrier_ops.h:
 * entry_send_mode); another communicator's go to MPI, not blocking inside MPI while clampi
 * holds receives. */
static inline __attribute__((always_inline)) int send_entry(const void *buf, int count, MPI_Datatype type, int dest,
                                                            int tag, MPI_Comm comm, int mode, MPI_Request *request) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (mc) return mc->ops->entry_send_mode(mc, buf, count, type, dest, tag, mode, request);
    return clampi_msg_mpi_send(buf, count, type, dest, tag, comm, mode, request);
}

/* MPI's own blocking call clampi does not intercept otherwise (MPI_Mrecv of MPI's message):
 * as clampi_msg_mpi_send does, its nonblocking form (r) while clampi holds receives. */
#define UNBLOCKED(blocking, nonblocking, status)                           \
    do {                                                                   \
        if (!clampi_carrier_pending()) return blocking;                    \
        MPI_Request r;                                                     \
        int err = nonblocking;                                             \
        return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, status); \
    } while (0)

/* ---- sends ------------------------------------------------------------------------------ */
/* MPI_Send and MPI_Isend: a tail call into the carrier when the communicator is at hand
 * (clampi_pm_comm_hot), else, with no communicator of clampi's and no receive in clampi's
 * queues (a program preloaded without CLAMPI_MATCH), MPI's own call as a tail call (a few
 * loads per call: bench/match/profile_cost.sh), else the full decision in a call of its own
 * (noinline: its calls would otherwise give the fast paths a stack frame). */
static __attribute__((noinline)) int send_other(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                                MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (mc) return mc->ops->entry_send(mc, buf, count, type, dest, tag);
    return clampi_msg_mpi_send(buf, count, type, dest, tag, comm, CLAMPI_SEND_STANDARD, NULL);
}

CLAMPI_API int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm_hot(comm);
    if (mc) return mc->ops->entry_send(mc, buf, count, type, dest, tag);
    if (clampi_pm_none() && !clampi_carrier_pending()) return PMPI_Send(buf, count, type, dest, tag, comm);
    return send_other(buf, count, type, dest, tag, comm);
}

static __attribute__((noinline)) int isend_other(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                                 MPI_Comm comm, MPI_Request *request) {
    if (!request) return PMPI_Isend(buf, count, type, dest, tag, comm, request); /* MPI's error */
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (mc) return mc->ops->entry_isend(mc, buf, count, type, dest, tag, request);
    return clampi_msg_mpi_send(buf, count, type, dest, tag, comm, CLAMPI_SEND_STANDARD, request);
}

CLAMPI_API int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *request) {
    clampi_mcomm *mc = request ? clampi_pm_comm_hot(comm) : NULL;
    if (mc) return mc->ops->entry_isend(mc, buf, count, type, dest, tag, request);
    if (clampi_pm_none()) return PMPI_Isend(buf, count, type, dest, tag, comm, request);
    return isend_other(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return send_entry(buf, count, type, dest, tag, comm, CLAMPI_SEND_READY, NULL);
}

CLAMPI_API int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request) {
    if (!request) return PMPI_Irsend(buf, count, type, dest, tag, comm, request);
    return send_entry(buf, count, type, dest, tag, comm, CLAMPI_SEND_READY, request);
}

CLAMPI_API int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return send_entry(buf, count, type, dest, tag, comm, CLAMPI_SEND_SYNC, NULL);
}

CLAMPI_API int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request) {
    if (!request) return PMPI_Issend(buf, count, type, dest, tag, comm, request);
    return send_entry(buf, count, type, dest, tag, comm, CLAMPI_SEND_SYNC, request);
}

/* Buffered sends: clampi holds the attached buffer when MPI_COMM_WORLD is clampi's
 * (src/msg/bsend.c says how). */
CLAMPI_API int MPI_Buffer_attach(void *buffer, int size) { return clampi_msg_buffer_attach(buffer, size); }

CLAMPI_API int MPI_Buffer_detach(void *buffer_addr, int *size) { return clampi_msg_buffer_detach(buffer_addr, size); }

#ifdef CLAMPI_MPI_HAS_BUFFER_FLUSH
/* MPI-4.1's buffers of communicators and flushes (src/msg/bsend.c): a clampi communicator's
 * buffer is clampi's, as the process's is. */
CLAMPI_API int MPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size) {
    return clampi_msg_comm_buffer_attach(comm, buffer, size);
}

CLAMPI_API int MPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size) {
    if (comm == MPI_COMM_NULL || !buffer_addr || !size) return PMPI_Comm_detach_buffer(comm, buffer_addr, size);
    return clampi_msg_comm_buffer_detach(comm, buffer_addr, size);
}

CLAMPI_API int MPI_Buffer_flush(void) { return clampi_msg_buffer_flush(MPI_COMM_NULL); }

CLAMPI_API int MPI_Buffer_iflush(MPI_Request *request) { return clampi_msg_buffer_iflush(MPI_COMM_NULL, request); }

CLAMPI_API int MPI_Comm_flush_buffer(MPI_Comm comm) {
    return comm == MPI_COMM_NULL ? PMPI_Comm_flush_buffer(comm) : clampi_msg_buffer_flush(comm);
}

CLAMPI_API int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request) {
    if (comm == MPI_COMM_NULL) return PMPI_Comm_iflush_buffer(comm, request);
    return clampi_msg_buffer_iflush(comm, request);
}

#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
CLAMPI_API int MPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size) {
    return clampi_msg_comm_buffer_attach(comm, buffer, size > INT_MAX ? INT_MAX : size < INT_MIN ? -1 : (int)size);
}

CLAMPI_API int MPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size) {
    if (comm == MPI_COMM_NULL || !buffer_addr || !size) return PMPI_Comm_detach_buffer_c(comm, buffer_addr, size);
    int n = 0;
    int rc = clampi_msg_comm_buffer_detach(comm, buffer_addr, &n);
    if (rc == MPI_SUCCESS) *size = n;
    return rc;
}
#endif
#endif

#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
/* count (> INT_MAX) elements of type as one element of a type built with int counts only:
 * q vectors of INT_MAX elements and the rest (BigMPI's construction), so that clampi's and
 * MPI's int-count datatype queries work on it; the type signature is count x type's, so it
 * matches what count elements of type would. */
int clampi_pm_narrow_big(MPI_Count count, MPI_Datatype type, MPI_Datatype *made) {
    MPI_Aint lb, extent;
    if (count < 0 || type == MPI_DATATYPE_NULL || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) return 0;
    const MPI_Count chunk = INT_MAX, q = count / chunk, rest = count % chunk;
    if (q > INT_MAX) return 0;
    MPI_Datatype v, r = MPI_DATATYPE_NULL;
    if (PMPI_Type_vector((int)q, (int)chunk, (int)chunk, type, &v) != MPI_SUCCESS) return 0;
    int err = MPI_SUCCESS;
    if (rest == 0) {
        *made = v;
    } else {
        err = PMPI_Type_contiguous((int)rest, type, &r);
        if (err == MPI_SUCCESS) {
            int lens[2] = {1, 1};
            MPI_Aint disps[2] = {0, (MPI_Aint)(q * chunk) * extent};
            MPI_Datatype types[2] = {v, r};
            err = PMPI_Type_create_struct(2, lens, disps, types, made);
            PMPI_Type_free(&r);
        }
        PMPI_Type_free(&v);
    }
    if (err == MPI_SUCCESS) err = PMPI_Type_commit(made);
    if (err != MPI_SUCCESS) return 0;
    clampi_type_info f;
    const clampi_type_info *ti;
    if (clampi_type_info_get(type, &ti, &f) == 0 && clampi_type_runs_contiguous(ti)) clampi_type_mark_contiguous(*made);
    return 1;
}

/* clampi's buffered sends take their bytes from the first 2 GiB of a larger buffer. */
CLAMPI_API int MPI_Buffer_attach_c(void *buffer, MPI_Count size) {
    return clampi_msg_buffer_attach(buffer, size > INT_MAX ? INT_MAX : size < INT_MIN ? -1 : (int)size);
}

CLAMPI_API int MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) {
    int n = 0;
    int rc = clampi_msg_buffer_detach(buffer_addr, &n);
    if (rc == MPI_SUCCESS && size) *size = n;
    return rc;
}
#endif

CLAMPI_API int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (send_route(buf, count, type, dest, tag, comm)) return clampi_msg_bsend(buf, count, type, dest, tag, comm, NULL);
    return clampi_msg_bsend_mpi(buf, count, type, dest, tag, comm, NULL);
}

CLAMPI_API int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request) {
    if (request && send_route(buf, count, type, dest, tag, comm))
        return clampi_msg_bsend(buf, count, type, dest, tag, comm, request);
    if (!request) return PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
    return clampi_msg_bsend_mpi(buf, count, type, dest, tag, comm, request);
}

/* ---- receives: as the sends, and the matching profile's hook on each post (MPI's own
 * call first only while the profile is off) ------------------------------------------------- */
static __attribute__((noinline)) int irecv_other(void *buf, int count, MPI_Datatype type, int source, int tag,
                                                 MPI_Comm comm, MPI_Request *request) {
    clampi_mcomm *mc = request ? clampi_pm_comm(comm) : NULL;
    int rc = mc ? mc->ops->entry_irecv(mc, buf, count, type, source, tag, request)
                : PMPI_Irecv(buf, count, type, source, tag, comm, request);
    if (clampi_match_profiling() && rc == MPI_SUCCESS && source != MPI_PROC_NULL) clampi_match_profile_posted(*request);
    return rc;
}

CLAMPI_API int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Request *request) {
    clampi_mcomm *mc = request && clampi_match_profile_off() ? clampi_pm_comm_hot(comm) : NULL;
    if (mc) return mc->ops->entry_irecv(mc, buf, count, type, source, tag, request);
    if (clampi_pm_none() && clampi_match_profile_off()) return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    return irecv_other(buf, count, type, source, tag, comm, request);
}

static __attribute__((noinline)) int recv_other(void *buf, int count, MPI_Datatype type, int source, int tag,
                                                MPI_Comm comm, MPI_Status *status) {
    if (clampi_match_profiling() && source != MPI_PROC_NULL) clampi_match_profile_blocking();
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (mc) return mc->ops->entry_recv(mc, buf, count, type, source, tag, status);
    return clampi_msg_mpi_recv(buf, count, type, source, tag, comm, NULL, status);
}

CLAMPI_API int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Status *status) {
    clampi_mcomm *mc = clampi_match_profile_off() ? clampi_pm_comm_hot(comm) : NULL;
    if (mc) return mc->ops->entry_recv(mc, buf, count, type, source, tag, status);
    if (clampi_pm_none() && clampi_match_profile_off() && !clampi_carrier_pending())
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    return recv_other(buf, count, type, source, tag, comm, status);
}

/* Both halves on clampi (MPI_PROC_NULL allowed on either side), or both MPI's. */
static clampi_mcomm *sendrecv_route(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                                    int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (!mc || !clampi_msg_ok_buf(sbuf, scount, stype) || !clampi_msg_ok_buf(rbuf, rcount, rtype)) return NULL;
    if (dest != MPI_PROC_NULL && !clampi_msg_ok_send(mc, dest, stag)) return NULL;
    if (dest == MPI_PROC_NULL && (stag < 0 || stag > mc->tag_ub)) return NULL;
    if (source != MPI_PROC_NULL && !clampi_msg_ok_recv(mc, source, rtag)) return NULL;
    if (source == MPI_PROC_NULL && !(rtag == MPI_ANY_TAG || (rtag >= 0 && rtag <= mc->tag_ub))) return NULL;
    return mc;
}

/* The receive's status and error (MPI_ERR_TRUNCATE) as MPI_Sendrecv reports them. */
static int sendrecv_finish(MPI_Request *sreq, MPI_Request *rreq, MPI_Status *status) {
    int rc = CMPIX_Wait(rreq, status);
    int rs = CMPIX_Wait(sreq, MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS ? rc : rs;
}

CLAMPI_API int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Status *status) {
    clampi_mcomm *mc = sendrecv_route(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                      recvtag, comm);
    if (!mc) {
        clampi_carrier_release(); /* two operations: MPI's own call, after the hand-over */
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                             comm, status);
    }
    if (mc->ops->entry_sendrecv) {
        int rc = mc->ops->entry_sendrecv(mc, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                         source, recvtag, 0, status);
        if (rc != CLAMPI_CARRIER_NOT_NATIVE) return rc;
    }
    MPI_Request rr, sr;
    int rc = CMPIX_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rr);
    if (rc != MPI_SUCCESS) return rc;
    rc = CMPIX_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sr);
    if (rc != MPI_SUCCESS) return rc;
    return sendrecv_finish(&sr, &rr, status);
}

/* The replace forms: the data to send, packed (*pos bytes; none to MPI_PROC_NULL) before
 * the receive may overwrite it. NULL: no memory. */
static void *replace_packed(const void *buf, int count, MPI_Datatype type, int dest, MPI_Comm comm, int *pos) {
    int size = 0;
    *pos = 0;
    PMPI_Pack_size(count, type, comm, &size);
    void *tmp = malloc(size ? (size_t)size : 1);
    if (tmp && dest != MPI_PROC_NULL && size) PMPI_Pack(buf, count, type, tmp, size, pos, comm);
    return tmp;
}

CLAMPI_API int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                    int recvtag, MPI_Comm comm, MPI_Status *status) {
    clampi_mcomm *mc = sendrecv_route(buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm);
    if (!mc) {
        clampi_carrier_release();
        return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    }
    if (mc->ops->entry_sendrecv) {
        int rc = mc->ops->entry_sendrecv(mc, buf, count, type, dest, sendtag, NULL, 0, MPI_DATATYPE_NULL, source,
                                         recvtag, 1, status);
        if (rc != CLAMPI_CARRIER_NOT_NATIVE) return rc;
    }
    int pos;
    void *tmp = replace_packed(buf, count, type, dest, comm, &pos);
    if (!tmp) return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
    MPI_Request rr, sr;
    int rc = CMPIX_Irecv(buf, count, type, source, recvtag, comm, &rr);
    if (rc == MPI_SUCCESS) {
        rc = CMPIX_Isend(tmp, pos, MPI_PACKED, dest, sendtag, comm, &sr);
        if (rc == MPI_SUCCESS) rc = sendrecv_finish(&sr, &rr, status);
    }
    free(tmp);
    return rc;
}

#ifdef CLAMPI_MPI_HAS_ISENDRECV
/* MPI-4's nonblocking forms: a receive and a send on clampi's communicator, under one
 * request that completes when both have (src/msg/pair.c). */
CLAMPI_API int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Request *request) {
    if (!request || !sendrecv_route(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                    recvtag, comm))
        return PMPI_Isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                              recvtag, comm, request);
    MPI_Request rr, sr;
    int rc = CMPIX_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rr);
    if (rc != MPI_SUCCESS) return rc;
    rc = CMPIX_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sr);
    if (rc != MPI_SUCCESS) return rc;
    return clampi_msg_pair(comm, rr, sr, NULL, request);
}

CLAMPI_API int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                     int recvtag, MPI_Comm comm, MPI_Request *request) {
    if (!request || !sendrecv_route(buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm))
        return PMPI_Isendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, request);
    int pos;
    void *tmp = replace_packed(buf, count, type, dest, comm, &pos);
    if (!tmp) return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
    MPI_Request rr, sr;
    int rc = CMPIX_Irecv(buf, count, type, source, recvtag, comm, &rr);
    if (rc == MPI_SUCCESS) rc = CMPIX_Isend(tmp, pos, MPI_PACKED, dest, sendtag, comm, &sr);
    if (rc != MPI_SUCCESS) {
        free(tmp);
        return rc;
    }
    return clampi_msg_pair(comm, rr, sr, tmp, request); /* tmp freed with the request */
}
#endif

/* ---- probes --------------------------------------------------------------------------- */
static clampi_mcomm *probe_route(int source, int tag, MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    return mc && clampi_msg_ok_recv(mc, source, tag) ? mc : NULL;
}

/* MPI's blocking probe (matched when message is not NULL) while clampi holds receives on
 * the MPI carrier: polled while clampi takes messages (see UNBLOCKED). */
static int mpi_probe_polled(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    for (unsigned spins = 0;;) {
        int flag = 0, err = message ? PMPI_Improbe(source, tag, comm, &flag, message, status)
                                    : PMPI_Iprobe(source, tag, comm, &flag, status);
        if (err != MPI_SUCCESS || flag) return err;
        clampi_msg_progress();
        clampi_msg_pause(&spins);
        /* MPI's nonblocking probes say nothing of a revocation: its blocking one fails */
        if (spins % 16 == 0 && clampi_pm_revoked(comm))
            return message ? PMPI_Mprobe(source, tag, comm, message, status) : PMPI_Probe(source, tag, comm, status);
    }
}

/* The carrier's own probe (MPI's at depth 0 on the MPI carrier), or CLAMPI_CARRIER_NOT_NATIVE */
static inline int native_probe(clampi_mcomm *mc, int source, int tag, int *flag, MPI_Message *message,
                               MPI_Status *status) {
    return mc->ops->entry_probe ? mc->ops->entry_probe(mc, source, tag, flag, message, status)
                                : CLAMPI_CARRIER_NOT_NATIVE;
}

CLAMPI_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    clampi_mcomm *mc = flag ? probe_route(source, tag, comm) : NULL;
    if (mc) {
        int rc = native_probe(mc, source, tag, flag, NULL, status);
        return rc != CLAMPI_CARRIER_NOT_NATIVE ? rc : CMPIX_Iprobe(source, tag, comm, flag, status);
    }
    clampi_carrier_progress(); /* as a probe of MPI progresses its queue (nothing if clampi holds none) */
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

CLAMPI_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    clampi_mcomm *mc = probe_route(source, tag, comm);
    if (mc) {
        int rc = native_probe(mc, source, tag, NULL, NULL, status);
        return rc != CLAMPI_CARRIER_NOT_NATIVE ? rc : CMPIX_Probe(source, tag, comm, status);
    }
    if (!clampi_carrier_pending()) return PMPI_Probe(source, tag, comm, status);
    return mpi_probe_polled(source, tag, comm, NULL, status);
}

/* Matched probes: clampi's messages get MPI_Message handles of their own (a table maps
 * them back); MPI's (MPI_MESSAGE_NO_PROC included) stay MPI's. Open MPI's MPI_Message (and
 * the MPI-5 ABI's) is a pointer: clampi's handle is its message's address. MPICH's is an int whose two top
 * bits say which kind of handle it is; 00 is no MPICH handle, so clampi's are 0x0exxxxxx. */
typedef struct pmsg {
    MPI_Message handle;
    int fhandle; /* its Fortran handle, never one of MPI's */
    CMPIX_Message msg;
    struct pmsg *next;
} pmsg;
static pmsg *pmsgs;
static pthread_mutex_t pmsgs_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned pmsg_counter;

static MPI_Message handle_of(CMPIX_Message msg) {
    pmsg *p = malloc(sizeof *p);
    if (!p) return MPI_MESSAGE_NULL;
    p->msg = msg;
    pthread_mutex_lock(&pmsgs_lock);
    unsigned n = pmsg_counter++ & 0xffffff;
#if defined(OPEN_MPI) || defined(MPI_ABI) /* MPI_Message is a pointer */
    p->handle = (MPI_Message)(void *)msg;
    p->fhandle = -16 - (int)n; /* Open MPI's Fortran handles are indices, >= 0 */
#else
    p->handle = (MPI_Message)(0x0e000000 | n);
    p->fhandle = (int)(0x0e000000 | n); /* MPICH's Fortran handle is its C handle */
#endif
    p->next = pmsgs;
    __atomic_store_n(&pmsgs, p, __ATOMIC_RELEASE); /* take's unlocked look */
    pthread_mutex_unlock(&pmsgs_lock);
    return p->handle;
}

#ifndef MPI_ABI
/* Fortran handles of messages: clampi's by the table, the MPI's by MPI. */
/* The table entry with handle h (by_fortran 0) or Fortran handle f (1), copied out. */
static int pmsg_lookup(MPI_Message h, int f, int by_fortran, pmsg *out) {
    int found = 0;
    pthread_mutex_lock(&pmsgs_lock);
    for (pmsg *p = pmsgs; p && !found; p = p->next)
        if (by_fortran ? p->fhandle == f : p->handle == h) {
            *out = *p;
            found = 1;
        }
    pthread_mutex_unlock(&pmsgs_lock);
    return found;
}

MPI_Message clampi_pm_message_f2c(MPI_Fint f) {
    pmsg e;
    return pmsg_lookup(MPI_MESSAGE_NULL, f, 1, &e) ? e.handle : PMPI_Message_f2c(f);
}

MPI_Fint clampi_pm_message_c2f(MPI_Message m) {
    pmsg e;
    return pmsg_lookup(m, 0, 0, &e) ? e.fhandle : PMPI_Message_c2f(m);
}

#endif

/* clampi's message behind handle, taken out of the table (NULL: not clampi's) */
static CMPIX_Message take(MPI_Message handle) {
    CMPIX_Message m = CMPIX_MESSAGE_NULL;
    /* none of clampi's (MPI's own matched probe: entry_probe): no lock. A handle of clampi's
     * was entered by this thread's probe, or handed over by one synchronizing with it. */
    if (!__atomic_load_n(&pmsgs, __ATOMIC_ACQUIRE)) return m;
    pthread_mutex_lock(&pmsgs_lock);
    for (pmsg **p = &pmsgs; *p; p = &(*p)->next)
        if ((*p)->handle == handle) {
            pmsg *f = *p;
            m = f->msg;
            __atomic_store_n(p, f->next, __ATOMIC_RELEASE);
            free(f);
            break;
        }
    pthread_mutex_unlock(&pmsgs_lock);
    return m;
}

CLAMPI_API int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    clampi_mcomm *mc = flag && message ? probe_route(source, tag, comm) : NULL;
    if (!mc) return PMPI_Improbe(source, tag, comm, flag, message, status);
    int rc = native_probe(mc, source, tag, flag, message, status);
    if (rc != CLAMPI_CARRIER_NOT_NATIVE) return rc;
    CMPIX_Message m;
    rc = CMPIX_Improbe(source, tag, comm, flag, &m, status);
    if (rc == MPI_SUCCESS) *message = *flag ? handle_of(m) : MPI_MESSAGE_NULL;
    return rc;
}

CLAMPI_API int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    clampi_mcomm *mc = message ? probe_route(source, tag, comm) : NULL;
    if (!mc) {
        if (!message || !clampi_carrier_pending()) return PMPI_Mprobe(source, tag, comm, message, status);
        return mpi_probe_polled(source, tag, comm, message, status);
    }
    int rc = native_probe(mc, source, tag, NULL, message, status);
    if (rc != CLAMPI_CARRIER_NOT_NATIVE) return rc;
    CMPIX_Message m;
    rc = CMPIX_Mprobe(source, tag, comm, &m, status);
    if (rc == MPI_SUCCESS) *message = handle_of(m);
    return rc;
}

CLAMPI_API int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request) {
    CMPIX_Message m = message && request ? take(*message) : CMPIX_MESSAGE_NULL;
    if (!m) return PMPI_Imrecv(buf, count, type, message, request);
    *message = MPI_MESSAGE_NULL;
    return CMPIX_Imrecv(buf, count, type, &m, request);
}

CLAMPI_API int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
    CMPIX_Message m = message ? take(*message) : CMPIX_MESSAGE_NULL;
    if (!m)
        UNBLOCKED(PMPI_Mrecv(buf, count, type, message, status), PMPI_Imrecv(buf, count, type, message, &r), status);
    *message = MPI_MESSAGE_NULL;
    return CMPIX_Mrecv(buf, count, type, &m, status);
}

/* the hidden names of the int entry points (match_entry.h) */
CLAMPI_PM_INT_ENTRY(Send);
CLAMPI_PM_INT_ENTRY(Bsend);
CLAMPI_PM_INT_ENTRY(Rsend);
CLAMPI_PM_INT_ENTRY(Ssend);
CLAMPI_PM_INT_ENTRY(Isend);
CLAMPI_PM_INT_ENTRY(Ibsend);
CLAMPI_PM_INT_ENTRY(Irsend);
CLAMPI_PM_INT_ENTRY(Issend);
CLAMPI_PM_INT_ENTRY(Recv);
CLAMPI_PM_INT_ENTRY(Irecv);
CLAMPI_PM_INT_ENTRY(Sendrecv);
CLAMPI_PM_INT_ENTRY(Sendrecv_replace);
CLAMPI_PM_INT_ENTRY(Mrecv);
CLAMPI_PM_INT_ENTRY(Imrecv);
#ifdef CLAMPI_MPI_HAS_ISENDRECV
CLAMPI_PM_INT_ENTRY(Isendrecv);
CLAMPI_PM_INT_ENTRY(Isendrecv_replace);
#endif
