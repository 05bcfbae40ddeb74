/* The UCX carrier (clampi_match_carrier=ucx, the default with UCX): clampi matches every
 * message of the communicator itself; sends go out as UCX active messages (transport_ucx.c),
 * arrivals meet clampi's matcher (match/). Its operations table, for carrier_ops.h. */
#include <stdlib.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

static int pack_bottom(int count, MPI_Datatype type, void *out, size_t size, MPI_Comm comm) {
    MPI_Datatype shifted;
    void *base;
    clampi_msg_bottom_type(count, type, &shifted, &base);
    int err = clampi_msg_pack(base, 1, shifted, out, size, comm);
    PMPI_Type_free(&shifted);
    return err;
}

/* A send started (dest a rank): *out is the request (internal: no MPI handle; the caller
 * waits with clampi_mreq_wait_internal), or an error was raised (*out NULL, or a finished
 * request carrying the error). */
static int send_start(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, clampi_mcomm *mc, int sync,
                      int internal, const clampi_type_info *tf, size_t bytes, clampi_mreq **out) {
    MPI_Comm comm = mc->comm;
    clampi_mreq *r;
    int err;
    *out = NULL;
    if ((err = clampi_mreq_create_ex(mc, 0, internal, (void *)buf, count, datatype, tf, &r)))
        return clampi_msg_raise(comm, err, NULL);
    r->sync = sync;
    clampi_msg_layout(r, count, tf);
    *out = r;
    const void *data = (const char *)buf + r->contig_offset;
    if (!r->contig) { /* pack a derived datatype */
        r->tmp = malloc(bytes);
        if (!r->tmp) {
            r->error = MPI_ERR_NO_MEM;
            clampi_msg_finish(r);
            return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
        }
        err = buf ? clampi_msg_pack(buf, count, datatype, r->tmp, bytes, comm)
                  : pack_bottom(count, datatype, r->tmp, bytes, comm);
        if (err != MPI_SUCCESS) { /* raised by MPI_Pack on comm (above INT_MAX bytes without MPI-4) */
            r->error = err;
            clampi_msg_finish(r);
            return err;
        }
        data = r->tmp;
    }
    clampi_msg_send(r, dest, tag, data, bytes);
    /* No progress while posting (a window of large messages would copy before its sends go
     * out: docs/matching.md, "Windows of large messages"); finished requests are released. */
    clampi_msg_reap();
    return MPI_SUCCESS;
}

/* A receive posted (source a rank or MPI_ANY_SOURCE): *out its request, or an error raised. */
static int recv_start(void *buf, int count, MPI_Datatype datatype, int source, int tag, clampi_mcomm *mc, int internal,
                      const clampi_type_info *tf, clampi_mreq **out) {
    clampi_mreq *r;
    int err;
    *out = NULL;
    if ((err = clampi_mreq_create_ex(mc, 1, internal, buf, count, datatype, tf, &r)))
        return clampi_msg_raise(mc->comm, err, NULL);
    clampi_msg_layout(r, count, tf);
    *out = r;
    clampi_match_key k = {mc->context, source == MPI_ANY_SOURCE ? CLAMPI_MATCH_ANY_SOURCE : source,
                          tag == MPI_ANY_TAG ? CLAMPI_MATCH_ANY_TAG : tag};
    uintptr_t msg;
    int m = clampi_matcher_post(mc->matcher, k, (uintptr_t)r, &msg);
    if (m == 1)
        clampi_msg_deliver((clampi_msg *)msg, r);
    else if (m == 0)
        clampi_msg_queued_recv(mc);
    else {
        r->error = MPI_ERR_NO_MEM;
        clampi_msg_finish(r);
    }
    return MPI_SUCCESS;
}

/* The preload's calls: what clampi can serve goes the CMPIX_ way; MPI_PROC_NULL as the peer
 * and bad input go to MPI's own call (its behaviour and error class). Ready mode: the
 * receive is posted (the program's promise); a standard send serves. */
static int entry_send_mode(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag, int mode,
                           MPI_Request *request) {
    if (!clampi_msg_ok_send(mc, dest, tag) || !clampi_msg_ok_buf(buf, count, type))
        return clampi_msg_mpi_send(buf, count, type, dest, tag, mc->comm, mode, request);
    int sync = mode == CLAMPI_SEND_SYNC;
    if (request) return clampi_msg_isend(buf, count, type, dest, tag, mc->comm, sync, request);
    return sync ? CMPIX_Ssend(buf, count, type, dest, tag, mc->comm)
                : CMPIX_Send(buf, count, type, dest, tag, mc->comm);
}

static int entry_send(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag) {
    return entry_send_mode(mc, buf, count, type, dest, tag, CLAMPI_SEND_STANDARD, NULL);
}

static int entry_isend(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Request *request) {
    return entry_send_mode(mc, buf, count, type, dest, tag, CLAMPI_SEND_STANDARD, request);
}

static int recv_any(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                    MPI_Request *request, MPI_Status *status) {
    if (!clampi_msg_ok_recv(mc, source, tag) || !clampi_msg_ok_buf(buf, count, type))
        return clampi_msg_mpi_recv(buf, count, type, source, tag, mc->comm, request, status);
    if (request) return CMPIX_Irecv(buf, count, type, source, tag, mc->comm, request);
    return CMPIX_Recv(buf, count, type, source, tag, mc->comm, status);
}

static int entry_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Status *status) {
    return recv_any(mc, buf, count, type, source, tag, NULL, status);
}

static int entry_irecv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                       MPI_Request *request) {
    return recv_any(mc, buf, count, type, source, tag, request, MPI_STATUS_IGNORE);
}

/* A blocking call's internal request r, waited for; err: the posting's own result. */
static int wait_blocking(clampi_mcomm *mc, clampi_mreq *r, int err, MPI_Status *status, const char *why) {
    if (!r) return err;
    int e = clampi_mreq_wait_internal(r, status);
    if (err != MPI_SUCCESS || e == MPI_SUCCESS) return err;
    return clampi_msg_raise(mc->comm, e, why);
}

static int post_send(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, const clampi_type_info *tf,
                     size_t bytes, int dest, int tag, int sync, MPI_Request *request) {
    clampi_mreq *r;
    int err = send_start(buf, count, type, dest, tag, mc, sync, request == NULL, tf, bytes, &r);
    if (!request) return wait_blocking(mc, r, err, MPI_STATUS_IGNORE, "send failed");
    if (r) *request = r->mpi;
    return err;
}

static int post_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, const clampi_type_info *tf, int source,
                     int tag, MPI_Request *request, MPI_Status *status) {
    clampi_mreq *r;
    int err = recv_start(buf, count, type, source, tag, mc, request == NULL, tf, &r);
    if (!request) return wait_blocking(mc, r, err, status, "receive failed");
    if (r) *request = r->mpi;
    return err;
}

/* A message found stays queued (remove 0) and is freed only by the receive that takes it,
 * which must come from this thread after the probe (MPI's rule): reading it is safe. */
static int probe(clampi_mcomm *mc, int source, int tag, int remove, int *flag, clampi_msg **m, MPI_Status *status) {
    clampi_match_key k = {mc->context, source == MPI_ANY_SOURCE ? CLAMPI_MATCH_ANY_SOURCE : source,
                          tag == MPI_ANY_TAG ? CLAMPI_MATCH_ANY_TAG : tag};
    uintptr_t found;
    *flag = clampi_matcher_probe(mc->matcher, k, remove, &found);
    if (*flag) {
        clampi_msg_probe_status((const clampi_msg *)found, status);
        if (m) *m = (clampi_msg *)found;
    }
    return MPI_SUCCESS;
}

static void mrecv(clampi_mreq *r, clampi_msg *m) { clampi_msg_deliver(m, r); /* no progress, as in any posting */ }

static int cancel(clampi_mreq *r) { return clampi_matcher_cancel(r->mc->matcher, (uintptr_t)r); }

/* A receive in clampi's queue on a revoked communicator (revoke.c): it fails. */
static void fail_one(uintptr_t cookie, void *arg) {
    clampi_mreq *r = (clampi_mreq *)cookie;
    r->error = *(const int *)arg;
    clampi_msg_finish(r);
}

static void fail_posted(clampi_mcomm *mc, int code) {
    if (mc->matcher) clampi_matcher_drain(mc->matcher, 0, fail_one, &code);
    clampi_msg_ucx_drop_revoked(mc);               /* senders waiting for these receivers go on */
    clampi_msg_ucx_release_sync_senders(mc, code); /* and this side's waiting for theirs */
}

/* The endpoints (collective), once every process has its per-peer arrays (prepare). */
static int enable(clampi_mcomm *mc, unsigned native_base, unsigned native_cap) {
    (void)native_base, (void)native_cap;
    return clampi_msg_ucx_connect(mc, 0);
}

/* Made from parent, whose set-up joined every member (parent->world): nothing to exchange. */
static int enable_like(clampi_mcomm *mc, const clampi_mcomm *parent) {
    (void)parent;
    return clampi_msg_ucx_connect(mc, 1);
}

/* Retired: arrivals nobody can receive any more are dropped (retire.c's sweep drops later ones). */
static void retire(clampi_mcomm *mc) { clampi_msg_drop_unexpected(mc); }

static void get_info(const clampi_mcomm *mc, MPI_Info info) {
    (void)mc;
    PMPI_Info_set(info, CLAMPI_MATCH_CARRIER_KEY, "ucx");
}

static void disable(clampi_mcomm *mc) { (void)mc; /* everything it holds is in the matcher and endpoints */ }

const clampi_carrier_ops clampi_carrier_ucx_ops = {
    .name = "ucx",
    .prepare = clampi_msg_ucx_enable,
    .enable = enable,
    .enable_like = enable_like,
    .entry_send = entry_send,
    .entry_isend = entry_isend,
    .entry_send_mode = entry_send_mode,
    .entry_recv = entry_recv,
    .entry_irecv = entry_irecv,
    .send = post_send,
    .recv = post_recv,
    .probe = probe,
    .mrecv = mrecv,
    .cancel = cancel,
    .fail_posted = fail_posted,
    .barrier = clampi_msg_ucx_barrier,
    .retire = retire,
    .disable = disable,
    .release = clampi_msg_ucx_disconnect,
    .get_info = get_info,
};
