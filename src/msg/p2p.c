/* CMPIX_Isend / Irecv / Send / Recv / Iprobe / Probe / Cancel: the checks every carrier
 * shares, then the communicator's carrier (mc->ops, carrier_ops.h). */
#include <sched.h>
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

/* Checks shared by every call; returns MPI_SUCCESS or raises. */
static int check_comm(MPI_Comm comm, clampi_mcomm **mc) {
    if (comm == MPI_COMM_NULL) return clampi_msg_raise(comm, MPI_ERR_COMM, "MPI_COMM_NULL");
    if (!(*mc = clampi_msg_comm(comm)))
        return clampi_msg_raise(comm, MPI_ERR_COMM, "communicator not enabled (CMPIX_Comm_enable)");
    int revoked = atomic_load_explicit(&(*mc)->revoked, memory_order_relaxed);
    return revoked ? clampi_msg_raise(comm, revoked, "communicator revoked") : MPI_SUCCESS;
}

static int check_buffer(MPI_Comm comm, const void *buf, int count, MPI_Datatype type, clampi_type_info *tf,
                        size_t *bytes) {
    if (count < 0) return clampi_msg_raise(comm, MPI_ERR_COUNT, "negative count");
    if (type == MPI_DATATYPE_NULL) return clampi_msg_raise(comm, MPI_ERR_TYPE, "MPI_DATATYPE_NULL");
    if (clampi_msg_type_facts(type, tf) != 0) return clampi_msg_raise(comm, MPI_ERR_TYPE, "invalid datatype");
    *bytes = (size_t)count * (size_t)tf->size;
    /* NULL is MPI_BOTTOM too: refused only when the data would start at address 0 (an
     * absolute-address datatype has its true lower bound at the data's address). */
    if (!buf && *bytes && tf->true_lb == 0) return clampi_msg_raise(comm, MPI_ERR_BUFFER, "NULL buffer");
    return MPI_SUCCESS;
}

/* A receive's or probe's source and tag (wildcards and MPI_PROC_NULL allowed). */
static int check_source_tag(const clampi_mcomm *mc, MPI_Comm comm, int source, int tag) {
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE && (source < 0 || source >= mc->size))
        return clampi_msg_raise(comm, MPI_ERR_RANK, "bad source");
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > mc->tag_ub)) return clampi_msg_raise(comm, MPI_ERR_TAG, "bad tag");
    return MPI_SUCCESS;
}

/* MPI_BOTTOM only with an absolute-address type */
int clampi_msg_ok_bottom(MPI_Datatype type) {
    int size = 0;
    MPI_Aint tlb = 0, textent = 0;
    PMPI_Type_size(type, &size);
    if (size == 0) return 1;
    PMPI_Type_get_true_extent(type, &tlb, &textent);
    return tlb != 0;
}

/* An already-complete request (MPI_PROC_NULL). */
static int null_request(clampi_mcomm *mc, int is_recv, MPI_Request *request) {
    clampi_mreq *r;
    int err = clampi_mreq_create(mc, is_recv, NULL, 0, MPI_BYTE, &r);
    if (err != MPI_SUCCESS) return clampi_msg_raise(mc ? mc->comm : MPI_COMM_NULL, err, NULL);
    r->source = MPI_PROC_NULL;
    r->tag = MPI_ANY_TAG;
    clampi_mreq_detach(r); /* nothing to cancel */
    *request = r->mpi;
    clampi_msg_finish(r);
    clampi_msg_reap();
    return MPI_SUCCESS;
}

/* The checks of every send; MPI_SUCCESS or raised. */
static int send_checks(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                       clampi_mcomm **mc, clampi_type_info *tf, size_t *bytes) {
    int err = check_comm(comm, mc);
    if (err) return err;
    if ((err = check_buffer(comm, buf, count, datatype, tf, bytes))) return err;
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= (*mc)->size))
        return clampi_msg_raise(comm, MPI_ERR_RANK, "bad destination");
    if (tag < 0 || tag > (*mc)->tag_ub) return clampi_msg_raise(comm, MPI_ERR_TAG, "bad tag");
    return MPI_SUCCESS;
}

int clampi_msg_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, int sync,
                     MPI_Request *request) {
    clampi_mcomm *mc;
    clampi_type_info tf;
    size_t bytes;
    int err = send_checks(buf, count, datatype, dest, tag, comm, &mc, &tf, &bytes);
    if (err) return err;
    if (!request) return clampi_msg_raise(comm, MPI_ERR_ARG, "NULL request");
    if (dest == MPI_PROC_NULL) return null_request(mc, 0, request);
    return mc->ops->send(mc, buf, count, datatype, &tf, bytes, dest, tag, sync, request);
}

/* A blocking send: an internal request, no MPI object. */
static int send_blocking(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                         int sync) {
    clampi_mcomm *mc;
    clampi_type_info tf;
    size_t bytes;
    int err = send_checks(buf, count, datatype, dest, tag, comm, &mc, &tf, &bytes);
    if (err || dest == MPI_PROC_NULL) return err;
    return mc->ops->send(mc, buf, count, datatype, &tf, bytes, dest, tag, sync, NULL);
}

int CMPIX_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request) {
    return clampi_msg_isend(buf, count, datatype, dest, tag, comm, 0, request);
}

int CMPIX_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Request *request) {
    return clampi_msg_isend(buf, count, datatype, dest, tag, comm, 1, request);
}

int CMPIX_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    return send_blocking(buf, count, datatype, dest, tag, comm, 1);
}

static void proc_null_status(MPI_Status *status);

static int recv_checks(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       clampi_mcomm **mc, clampi_type_info *tf) {
    size_t bytes;
    int err = check_comm(comm, mc);
    if (err) return err;
    if ((err = check_buffer(comm, buf, count, datatype, tf, &bytes))) return err;
    return check_source_tag(*mc, comm, source, tag);
}

int CMPIX_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) {
    clampi_mcomm *mc;
    clampi_type_info tf;
    int err = recv_checks(buf, count, datatype, source, tag, comm, &mc, &tf);
    if (err) return err;
    if (!request) return clampi_msg_raise(comm, MPI_ERR_ARG, "NULL request");
    if (source == MPI_PROC_NULL) return null_request(mc, 1, request);
    return mc->ops->recv(mc, buf, count, datatype, &tf, source, tag, request, MPI_STATUS_IGNORE);
}

int CMPIX_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    return send_blocking(buf, count, datatype, dest, tag, comm, 0);
}

/* A blocking receive: an internal request, no MPI object. */
int CMPIX_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    clampi_mcomm *mc;
    clampi_type_info tf;
    int err = recv_checks(buf, count, datatype, source, tag, comm, &mc, &tf);
    if (err) return err;
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE) proc_null_status(status);
        return MPI_SUCCESS;
    }
    return mc->ops->recv(mc, buf, count, datatype, &tf, source, tag, NULL, status);
}

void clampi_msg_probe_status(const clampi_msg *m, MPI_Status *status) {
    status->MPI_SOURCE = m->hdr.source;
    status->MPI_TAG = m->hdr.tag; /* MPI_ERROR untouched, as MPI's probes leave it */
    PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)m->hdr.bytes);
    PMPI_Status_set_cancelled(status, 0);
}

static void proc_null_status(MPI_Status *status) {
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

/* ---- matched probe ------------------------------------------------------------------ */
struct clampi_message {
    clampi_mcomm *mc;
    clampi_msg *m;
};
static struct clampi_message no_proc_message;
CMPIX_Message const CMPIX_MESSAGE_NO_PROC = &no_proc_message;

/* What both probes do first: the argument checks, MPI_PROC_NULL (answered at once: *flag =
 * 1), and progress. Returns an MPI code. */
static int probe_begin(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status, clampi_mcomm **mc) {
    int err = check_comm(comm, mc);
    if (err) return err;
    if ((err = check_source_tag(*mc, comm, source, tag))) return err;
    if (!flag) return clampi_msg_raise(comm, MPI_ERR_ARG, "NULL flag");
    *flag = 0;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    clampi_msg_progress();
    return MPI_SUCCESS;
}

int CMPIX_Improbe(int source, int tag, MPI_Comm comm, int *flag, CMPIX_Message *message, MPI_Status *status) {
    clampi_mcomm *mc;
    MPI_Status ignored;
    if (status == MPI_STATUS_IGNORE) status = &ignored;
    int err = probe_begin(source, tag, comm, flag, status, &mc);
    if (err) return err;
    if (!message) return clampi_msg_raise(comm, MPI_ERR_ARG, "NULL message");
    if (*flag) { /* MPI_PROC_NULL */
        *message = CMPIX_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    clampi_msg *found = NULL;
    if ((err = mc->ops->probe(mc, source, tag, 1, flag, &found, status)) != MPI_SUCCESS) return err;
    *message = CMPIX_MESSAGE_NULL;
    if (*flag) {
        struct clampi_message *cm = malloc(sizeof *cm);
        if (!cm) { /* put nothing back: the message is lost; report */
            clampi_msg_free(found);
            *flag = 0;
            return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
        }
        cm->mc = mc;
        clampi_msg_comm_ref(mc); /* MPI_Mrecv may follow MPI_Comm_free */
        cm->m = found;
        clampi_msg_probe_status(cm->m, status);
        *message = cm;
    }
    return MPI_SUCCESS;
}

int CMPIX_Mprobe(int source, int tag, MPI_Comm comm, CMPIX_Message *message, MPI_Status *status) {
    int flag = 0, err;
    unsigned spins = 0;
    while ((err = CMPIX_Improbe(source, tag, comm, &flag, message, status)) == MPI_SUCCESS && !flag) {
        clampi_msg_pause(&spins);
        if (spins % 16 == 0) clampi_msg_poke_mpi(); /* a revocation (revoke.c) ends the wait */
    }
    return err;
}

int CMPIX_Imrecv(void *buf, int count, MPI_Datatype datatype, CMPIX_Message *message, MPI_Request *request) {
    if (!message || *message == CMPIX_MESSAGE_NULL)
        return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "no message");
    if (!request) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_ARG, "NULL request");
    struct clampi_message *cm = *message;
    size_t bytes;
    clampi_type_info tf;
    MPI_Comm comm = cm == CMPIX_MESSAGE_NO_PROC ? MPI_COMM_NULL : cm->mc->comm;
    int err = check_buffer(comm, buf, count, datatype, &tf, &bytes);
    if (err) return err;
    if (cm == CMPIX_MESSAGE_NO_PROC) {
        *message = CMPIX_MESSAGE_NULL;
        return null_request(NULL, 1, request);
    }
    clampi_mreq *r;
    if ((err = clampi_mreq_create_ex(cm->mc, 1, 0, buf, count, datatype, &tf, &r)))
        return clampi_msg_raise(comm, err, NULL);
    /* r->mc stays: a synchronous send's acknowledgement goes through it (a cancel finds r in
     * no queue: no effect, as MPI) */
    clampi_msg_layout(r, count, &tf);
    *request = r->mpi;
    clampi_msg *m = cm->m;
    clampi_msg_comm_unref(cm->mc); /* r holds it now */
    free(cm);
    *message = CMPIX_MESSAGE_NULL;
    r->mc->ops->mrecv(r, m);
    return MPI_SUCCESS;
}

int CMPIX_Mrecv(void *buf, int count, MPI_Datatype datatype, CMPIX_Message *message, MPI_Status *status) {
    MPI_Request r;
    int err = CMPIX_Imrecv(buf, count, datatype, message, &r);
    return err ? err : CMPIX_Wait(&r, status);
}

int CMPIX_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    clampi_mcomm *mc;
    MPI_Status ignored;
    if (status == MPI_STATUS_IGNORE) status = &ignored;
    int err = probe_begin(source, tag, comm, flag, status, &mc);
    if (err || *flag) return err; /* an error, or MPI_PROC_NULL */
    return mc->ops->probe(mc, source, tag, 0, flag, NULL, status);
}

int CMPIX_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    int flag = 0, err;
    unsigned spins = 0;
    while ((err = CMPIX_Iprobe(source, tag, comm, &flag, status)) == MPI_SUCCESS && !flag) {
        clampi_msg_pause(&spins);
        if (spins % 16 == 0) clampi_msg_poke_mpi(); /* a revocation (revoke.c) ends the wait */
    }
    return err;
}

/* A receive still in the posted queue is taken out and completes as cancelled. Anything
 * else (a receive that already matched, an MPI_PROC_NULL one, a send) is left alone, as
 * MPI_Cancel does: MPI_SUCCESS, and the request completes normally with
 * MPI_Test_cancelled false. */
int CMPIX_Cancel(MPI_Request *request) {
    if (!request) return clampi_msg_raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "NULL request");
    clampi_mreq *r = clampi_mreq_pin(*request);
    if (!r) return PMPI_Cancel(request); /* an ordinary MPI request */
    if (r->is_recv && !r->cancelled && r->mc && r->mc->ops->cancel(r) == 1) {
        r->cancelled = 1;
        r->bytes = 0;
        clampi_msg_finish(r);
    }
    clampi_mreq_unpin(r);
    clampi_msg_progress();
    return MPI_SUCCESS;
}
