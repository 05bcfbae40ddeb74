/* CLAMPI_MATCH under the preload: persistent requests on clampi communicators, and the
 * completion calls over them.
 *
 * The program's handle is a real MPI persistent request, made for MPI_PROC_NULL on the same
 * communicator (so MPI owns its identity, its inactive state and MPI_Request_free); clampi
 * keeps the operation's arguments beside it, and MPI_Start starts both: MPI's (complete at
 * once) and a clampi request (the "inner" one) doing the work. Every completion call
 * replaces such handles by their inner requests, lets src/msg/complete.c complete the mix,
 * gives back the handle (not MPI_REQUEST_NULL: persistent requests stay) and makes MPI's
 * inactive again. An inactive handle stands for MPI_REQUEST_NULL, as MPI treats it (empty
 * status). Without clampi persistent requests each call is complete.c's at once. */
#include <mpi.h>

#include "clampi/export.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "msg/msg.h"
#include "pmpi/match_entry.h"

enum { P_SEND, P_SSEND, P_BSEND, P_RSEND, P_RECV, P_BSEND_MPI };

typedef struct preq {
    MPI_Request handle, inner;
    int kind;
    void *buf;
    int count;
    MPI_Datatype type; /* a derived type: clampi's duplicate (the program may free its own) */
    int type_dup;
    int peer, tag;
    MPI_Comm comm;
    struct preq *next;
} preq;

#define PHASH 256
static preq *ptable[PHASH];
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int npersist;

static unsigned pslot(MPI_Request h) {
    uint64_t v = 0;
    memcpy(&v, &h, sizeof h < sizeof v ? sizeof h : sizeof v);
    return (unsigned)((v * 0x9e3779b97f4a7c15ull) >> 56) & (PHASH - 1);
}

static preq *pfind(MPI_Request h) {
    if (!atomic_load_explicit(&npersist, memory_order_relaxed) || h == MPI_REQUEST_NULL) return NULL;
    pthread_mutex_lock(&plock);
    preq *p = ptable[pslot(h)];
    while (p && p->handle != h) p = p->next;
    pthread_mutex_unlock(&plock);
    return p;
}

int clampi_pm_persistent(MPI_Request request, MPI_Request **inner) {
    preq *p = pfind(request);
    if (p) *inner = &p->inner;
    return p != NULL;
}

static int make(int kind, const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                MPI_Request *request) {
    preq *p = calloc(1, sizeof *p);
    if (!p) return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
    int rc = kind == P_RECV ? PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &p->handle)
                            : PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &p->handle);
    if (rc != MPI_SUCCESS) {
        free(p);
        return rc;
    }
    p->inner = MPI_REQUEST_NULL;
    p->kind = kind;
    p->buf = (void *)buf;
    p->count = count;
    p->type = type;
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED && PMPI_Type_dup(type, &p->type) == MPI_SUCCESS)
        p->type_dup = 1;
    else
        p->type = type;
    p->peer = peer;
    p->tag = tag;
    p->comm = comm;
    unsigned s = pslot(p->handle);
    pthread_mutex_lock(&plock);
    p->next = ptable[s];
    ptable[s] = p;
    pthread_mutex_unlock(&plock);
    atomic_fetch_add(&npersist, 1);
    *request = p->handle;
    return MPI_SUCCESS;
}

static void forget(preq *p) {
    pthread_mutex_lock(&plock);
    for (preq **q = &ptable[pslot(p->handle)]; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    pthread_mutex_unlock(&plock);
    atomic_fetch_sub(&npersist, 1);
    if (p->type_dup) PMPI_Type_free(&p->type);
    free(p);
}

/* The init calls: clampi's when it would serve the operation (peer a rank, valid
 * arguments), MPI's otherwise (MPI_PROC_NULL, bad input: MPI reports it). */
static clampi_mcomm *send_ok(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    return mc && clampi_msg_ok_send(mc, dest, tag) && clampi_msg_ok_buf(buf, count, type) ? mc : NULL;
}

CLAMPI_API int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                             MPI_Request *request) {
    if (request && send_ok(buf, count, type, dest, tag, comm))
        return make(P_SEND, buf, count, type, dest, tag, comm, request);
    return PMPI_Send_init(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *request) {
    if (request && send_ok(buf, count, type, dest, tag, comm))
        return make(P_SSEND, buf, count, type, dest, tag, comm, request);
    return PMPI_Ssend_init(buf, count, type, dest, tag, comm, request);
}

/* On an MPI communicator while CLAMPI_MATCH is on: clampi may hold the attached buffer
 * (match_bsend.c), so each start is clampi's buffered send on MPI's communicator, which
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
        return make(P_BSEND, buf, count, type, dest, tag, comm, request);
    if (request && !clampi_pm_comm(comm) && mpi_bsend_ok(buf, count, type, dest, tag, comm))
        return make(P_BSEND_MPI, buf, count, type, dest, tag, comm, request);
    return PMPI_Bsend_init(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *request) {
    if (request && send_ok(buf, count, type, dest, tag, comm))
        return make(P_RSEND, buf, count, type, dest, tag, comm, request);
    return PMPI_Rsend_init(buf, count, type, dest, tag, comm, request);
}

CLAMPI_API int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                             MPI_Request *request) {
    clampi_mcomm *mc = clampi_pm_comm(comm);
    if (request && mc && clampi_msg_ok_buf(buf, count, type) &&
        (source == MPI_ANY_SOURCE || (source >= 0 && source < mc->size)) &&
        (tag == MPI_ANY_TAG || (tag >= 0 && tag <= mc->tag_ub)))
        return make(P_RECV, buf, count, type, source, tag, comm, request);
    return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
}

static int start(MPI_Request *request) {
    preq *p = request ? pfind(*request) : NULL;
    if (!p) return PMPI_Start(request);
    if (p->inner != MPI_REQUEST_NULL) return clampi_msg_raise(p->comm, MPI_ERR_REQUEST, "MPI_Start: request active");
    int rc = PMPI_Start(&p->handle);
    if (rc != MPI_SUCCESS) return rc;
    switch (p->kind) {
    case P_RECV: return CMPIX_Irecv(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    case P_SSEND: return CMPIX_Issend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    case P_BSEND: return clampi_pm_bsend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    case P_BSEND_MPI: return clampi_pm_bsend_mpi(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    default: return CMPIX_Isend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    }
}

CLAMPI_API int MPI_Start(MPI_Request *request) { return start(request); }

CLAMPI_API int MPI_Startall(int count, MPI_Request requests[]) {
    if (!atomic_load_explicit(&npersist, memory_order_relaxed)) return PMPI_Startall(count, requests);
    if (count < 0 || (count > 0 && !requests)) return PMPI_Startall(count, requests); /* MPI's error */
    for (int i = 0; i < count; i++) {
        int rc = start(&requests[i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* MPI_Request_free: a persistent clampi request's active operation is left to finish
 * (MPI's rule), its handle freed. */
int clampi_pm_request_free(MPI_Request *request) {
    preq *p = request ? pfind(*request) : NULL;
    if (!p) return clampi_msg_request_free(request);
    if (p->inner != MPI_REQUEST_NULL) clampi_msg_request_free(&p->inner);
    int rc = PMPI_Request_free(request);
    forget(p);
    return rc;
}

/* ---- completion ------------------------------------------------------------------------ */
/* The requests as complete.c sees them: handles replaced by their inner requests. */
typedef struct subst {
    MPI_Request stack[64], *reqs;
    preq *pstack[64], **ps;
    int n, any;
} subst;

static void subst_begin(subst *s, int n, MPI_Request requests[]) {
    s->n = n;
    s->any = 0;
    s->reqs = n <= 64 ? s->stack : malloc(sizeof(MPI_Request) * (size_t)n);
    s->ps = n <= 64 ? s->pstack : malloc(sizeof(preq *) * (size_t)n);
    if (!s->reqs || !s->ps) { /* no memory: complete.c on the handles themselves */
        if (s->reqs != s->stack) free(s->reqs);
        if (s->ps != s->pstack) free(s->ps);
        s->reqs = requests;
        s->ps = NULL;
        return;
    }
    for (int i = 0; i < n; i++) {
        preq *p = pfind(requests[i]);
        s->ps[i] = p;
        s->reqs[i] = p ? p->inner : requests[i];
        s->any |= p != NULL;
    }
}

/* Copies back; a persistent request whose inner one completed becomes inactive. */
static void subst_end(subst *s, MPI_Request requests[]) {
    if (!s->ps) return;
    for (int i = 0; i < s->n; i++) {
        preq *p = s->ps[i];
        if (!p) {
            requests[i] = s->reqs[i];
        } else if (p->inner != MPI_REQUEST_NULL && s->reqs[i] == MPI_REQUEST_NULL) {
            p->inner = MPI_REQUEST_NULL;
            PMPI_Wait(&p->handle, MPI_STATUS_IGNORE); /* MPI's half: complete already */
        }
    }
    if (s->reqs != s->stack) free(s->reqs);
    if (s->ps != s->pstack) free(s->ps);
}

#define FAST(n) (!atomic_load_explicit(&npersist, memory_order_relaxed) || (n) <= 0)

int clampi_pm_wait(MPI_Request *request, MPI_Status *status) {
    if (FAST(1)) return clampi_msg_wait(request, status);
    subst s;
    subst_begin(&s, 1, request);
    int rc = clampi_msg_wait(s.reqs, status);
    subst_end(&s, request);
    return rc;
}

int clampi_pm_test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (FAST(1)) return clampi_msg_test(request, flag, status);
    subst s;
    subst_begin(&s, 1, request);
    int rc = clampi_msg_test(s.reqs, flag, status);
    subst_end(&s, request);
    return rc;
}

int clampi_pm_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (FAST(count)) return clampi_msg_waitany(count, requests, index, status);
    subst s;
    subst_begin(&s, count, requests);
    int rc = clampi_msg_waitany(count, s.reqs, index, status);
    subst_end(&s, requests);
    return rc;
}

int clampi_pm_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (FAST(count)) return clampi_msg_testany(count, requests, index, flag, status);
    subst s;
    subst_begin(&s, count, requests);
    int rc = clampi_msg_testany(count, s.reqs, index, flag, status);
    subst_end(&s, requests);
    return rc;
}

int clampi_pm_waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (FAST(count)) return clampi_msg_waitall(count, requests, statuses);
    subst s;
    subst_begin(&s, count, requests);
    int rc = clampi_msg_waitall(count, s.reqs, statuses);
    subst_end(&s, requests);
    return rc;
}

int clampi_pm_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (FAST(count)) return clampi_msg_testall(count, requests, flag, statuses);
    subst s;
    subst_begin(&s, count, requests);
    int rc = clampi_msg_testall(count, s.reqs, flag, statuses);
    subst_end(&s, requests);
    return rc;
}

int clampi_pm_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (FAST(incount)) return clampi_msg_waitsome(incount, requests, outcount, indices, statuses);
    subst s;
    subst_begin(&s, incount, requests);
    int rc = clampi_msg_waitsome(incount, s.reqs, outcount, indices, statuses);
    subst_end(&s, requests);
    return rc;
}

int clampi_pm_testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (FAST(incount)) return clampi_msg_testsome(incount, requests, outcount, indices, statuses);
    subst s;
    subst_begin(&s, incount, requests);
    int rc = clampi_msg_testsome(incount, s.reqs, outcount, indices, statuses);
    subst_end(&s, requests);
    return rc;
}
