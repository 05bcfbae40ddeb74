/* Persistent requests on clampi communicators (the preload's MPI_Send_init ... MPI_Recv_init,
 * MPI_Start, MPI_Startall: src/pmpi/match_persist.c); a persistent send on the MPI carrier
 * is MPI's own instead (its entry_send_init).
 *
 * The program's handle is a real MPI persistent request, made for MPI_PROC_NULL on the same
 * communicator (so MPI owns its identity, its inactive state and MPI_Request_free); clampi
 * keeps the operation's arguments beside it, and MPI_Start starts both: MPI's (complete at
 * once) and a clampi request (the "inner" one) doing the work. The completion calls
 * (complete_hooks.c, from the first one on) replace each such handle by its inner request
 * while complete.c completes the mix, and give it back (not MPI_REQUEST_NULL: persistent
 * requests stay), MPI's half inactive again. An inactive handle stands for MPI_REQUEST_NULL,
 * as MPI treats it (empty status).
 *
 * A carrier with a persistent receive of its own (entry_recv_init: the MPI carrier's on its
 * duplicate) makes the handle that receive instead ("on the wire"). A start MPI's queue may
 * take (entry_start_recv) is then MPI's own start, the handle itself the active request
 * ("native"); any other start leaves it inactive and a clampi request serves, as above. The
 * carrier tracks a native start as it tracks MPI_Irecv's; complete.c untracks it when a
 * completion call finishes it. */
#include <mpi.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "msg/msg_internal.h"

typedef struct preq {
    MPI_Request handle, inner;
    int kind;
    void *buf;
    int count;
    MPI_Datatype type; /* a derived type: clampi's duplicate (the program may free its own) */
    int type_dup;
    int peer, tag;
    MPI_Comm comm;
    MPI_Comm wire; /* on_wire: the duplicate the handle's receive is on */
    int on_wire;   /* the handle is the carrier's persistent receive */
    int gone;      /* its communicator left clampi (freed, disabled): not to be looked up again */
    struct preq *next;
} preq;

#define PHASH 256
static preq *ptable[PHASH];
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
_Atomic int clampi_msg_npersist;
_Atomic int clampi_msg_ninner;
_Atomic int clampi_msg_nproxy;

static unsigned pslot(MPI_Request h) {
    uint64_t v = 0;
    memcpy(&v, &h, sizeof h < sizeof v ? sizeof h : sizeof v);
    return (unsigned)((v * 0x9e3779b97f4a7c15ull) >> 56) & (PHASH - 1);
}

/* MPI_THREAD_MULTIPLE: lookups take plock too (another thread may free a handle of the
 * same slot); otherwise only the program's one calling thread changes or reads the table. */
static int plock_lookups = -1;

static preq *pfind(MPI_Request h) {
    if (!atomic_load_explicit(&clampi_msg_npersist, memory_order_relaxed) || h == MPI_REQUEST_NULL) return NULL;
    if (plock_lookups) pthread_mutex_lock(&plock);
    preq *p = ptable[pslot(h)];
    while (p && p->handle != h) p = p->next;
    if (plock_lookups) pthread_mutex_unlock(&plock);
    return p;
}

MPI_Request *clampi_msg_persistent(MPI_Request request) {
    preq *p = pfind(request);
    return p ? &p->inner : NULL;
}

/* Whether MPI's half of the persistent handle whose slot is inner was started (leave() makes
 * it inactive again); a handle on the wire is started only for native starts. */
int clampi_msg_persistent_started(MPI_Request *inner) {
    return !((preq *)((char *)inner - offsetof(preq, inner)))->on_wire;
}

int clampi_msg_persist_init(int kind, const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                            MPI_Request *request) {
    if (plock_lookups < 0) {
        int provided = MPI_THREAD_MULTIPLE;
        PMPI_Query_thread(&provided);
        plock_lookups = provided == MPI_THREAD_MULTIPLE;
    }
    preq *p = calloc(1, sizeof *p);
    if (!p) return clampi_msg_raise(comm, MPI_ERR_NO_MEM, NULL);
    clampi_mcomm *mc = kind == CLAMPI_PERSIST_RECV ? clampi_msg_comm(comm) : NULL;
    int rc;
    if (mc && mc->ops->entry_recv_init && !atomic_load_explicit(&mc->revoked, memory_order_relaxed)) {
        rc = mc->ops->entry_recv_init(mc, (void *)buf, count, type, peer, tag, &p->handle);
        p->on_wire = 1;
        p->wire = mc->wire;
    } else {
        rc = kind == CLAMPI_PERSIST_RECV ? PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &p->handle)
                                         : PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &p->handle);
    }
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
    atomic_fetch_add(&clampi_msg_npersist, 1);
    if (!p->on_wire) atomic_fetch_add(&clampi_msg_nproxy, 1);
    clampi_msg_hooks_need(); /* the completion calls look for persistent handles from now on */
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
    atomic_fetch_sub(&clampi_msg_npersist, 1);
    if (!p->on_wire) atomic_fetch_sub(&clampi_msg_nproxy, 1);
    if (p->type_dup) PMPI_Type_free(&p->type);
    free(p);
}

/* The request a start of p makes (p->inner); mc: p's communicator while clampi's and not
 * revoked, else NULL. */
static int start_inner(preq *p, clampi_mcomm *mc) {
    /* The carrier's own entry, as the preload's MPI_Irecv/MPI_Isend take it (the arguments
     * were checked at init): on the MPI carrier at depth 0 MPI's request on the duplicate,
     * not one of clampi's. A freed or revoked communicator: the checked calls report it. */
    if (mc) switch (p->kind) {
        case CLAMPI_PERSIST_RECV:
            return mc->ops->entry_irecv(mc, p->buf, p->count, p->type, p->peer, p->tag, &p->inner);
        case CLAMPI_PERSIST_SEND:
        case CLAMPI_PERSIST_RSEND:
            return mc->ops->entry_isend(mc, p->buf, p->count, p->type, p->peer, p->tag, &p->inner);
        case CLAMPI_PERSIST_SSEND:
            return mc->ops->entry_send_mode(mc, p->buf, p->count, p->type, p->peer, p->tag, CLAMPI_SEND_SYNC,
                                            &p->inner);
        default: break;
        }
    switch (p->kind) {
    case CLAMPI_PERSIST_RECV: return CMPIX_Irecv(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    case CLAMPI_PERSIST_SSEND: return CMPIX_Issend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    case CLAMPI_PERSIST_BSEND: return clampi_msg_bsend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    case CLAMPI_PERSIST_BSEND_MPI:
        return clampi_msg_bsend_mpi(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    default: return CMPIX_Isend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &p->inner);
    }
}

int clampi_msg_start(MPI_Request *request) {
    preq *p = request ? pfind(*request) : NULL;
    if (!p) return PMPI_Start(request);
    if (p->inner != MPI_REQUEST_NULL) return clampi_msg_raise(p->comm, MPI_ERR_REQUEST, "MPI_Start: request active");
    /* A receive on the wire whose communicator left clampi (the program may have freed it:
     * its handle is not looked up): MPI's own receive on the wire, as a persistent send there
     * stays, untracked (such a wire is never a spare). */
    if (p->on_wire && p->gone) return PMPI_Start(&p->handle);
    clampi_mcomm *mc = clampi_msg_comm(p->comm);
    int live = mc && !atomic_load_explicit(&mc->revoked, memory_order_relaxed);
    if (p->on_wire) { /* MPI's own start where MPI's queue takes it, else the handle stays inactive */
        if (live && mc->wire == p->wire) {
            int rc = mc->ops->entry_start_recv(mc, &p->handle);
            if (rc != CLAMPI_CARRIER_NOT_NATIVE) return rc;
        }
        if (clampi_carrier_tracked(p->handle)) /* started natively, not completed yet */
            return clampi_msg_raise(p->comm, MPI_ERR_REQUEST, "MPI_Start: request active");
    } else {
        int rc = PMPI_Start(&p->handle);
        if (rc != MPI_SUCCESS) return rc;
    }
    int rc = start_inner(p, live ? mc : NULL);
    if (p->inner != MPI_REQUEST_NULL) atomic_fetch_add(&clampi_msg_ninner, 1);
    return rc;
}

/* comm leaves clampi (retire.c: MPI_Comm_free, CMPIX_Comm_disable): its persistent
 * requests are never looked up by it again. */
void clampi_msg_persist_comm_gone(MPI_Comm comm) {
    if (!atomic_load_explicit(&clampi_msg_npersist, memory_order_relaxed)) return;
    pthread_mutex_lock(&plock);
    for (int i = 0; i < PHASH; i++)
        for (preq *p = ptable[i]; p; p = p->next)
            if (p->comm == comm) p->gone = 1;
    pthread_mutex_unlock(&plock);
}

int clampi_msg_startall(int count, MPI_Request requests[]) {
    if (!atomic_load_explicit(&clampi_msg_npersist, memory_order_relaxed)) return PMPI_Startall(count, requests);
    if (count < 0 || (count > 0 && !requests)) return PMPI_Startall(count, requests); /* MPI's error */
    for (int i = 0; i < count; i++) {
        int rc = clampi_msg_start(&requests[i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* MPI_Request_free of a persistent handle: its active operation is left to finish (MPI's
 * rule), the handle freed. */
int clampi_msg_persistent_free(MPI_Request *request) {
    preq *p = pfind(*request);
    if (!p) return clampi_msg_request_free(request);
    if (p->inner != MPI_REQUEST_NULL) {
        clampi_msg_request_free(&p->inner);
        atomic_fetch_sub(&clampi_msg_ninner, 1);
    }
    if (p->on_wire) clampi_carrier_forget(p->handle); /* still active: MPI finishes it, the wire in doubt */
    int rc = PMPI_Request_free(request);
    forget(p);
    return rc;
}
