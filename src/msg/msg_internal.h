/* The message layer's internals, for src/msg only (other layers: msg/msg.h, carrier_ops.h).
 *
 *   options.c   info keys / environment -> engine configuration (the one place)
 *   comm.c      CMPIX_Comm_enable/disable: context ids, matchers, the carrier's table, lookup
 *   progress.c  completion of clampi's requests, progress, and how each MPI's waits reach it
 *   transport_ucx.c, comm_ucx.c, endpoints.c   the UCX carrier (built only with UCX): the
 *               process's UCX worker, the AM handler (ordering, eager / rendezvous), sends,
 *               a communicator's endpoints
 *   request.c   clampi requests and their handles (pooled persistent MPI requests, or
 *               generalized ones), internal ones (blocking calls) without; handle -> request
 *   pool.c      free lists for requests and arrived messages (no malloc per message)
 *   p2p.c       CMPIX_Isend/Irecv/Send/Recv/Iprobe/Probe/Cancel
 *   complete.c  CMPIX_Wait/Test/Waitall/Waitany/Testall
 *   complete_hooks.c  the completion calls with persistent requests and the preload's hook
 *               (the matching profile); mpi_entry.c defines MPI's names over both
 *   persist.c   persistent requests (MPI_Send_init ... MPI_Start/Startall)
 *   bsend.c     buffered sends in the program's attached buffer
 *   pair.c      MPI_Isendrecv / MPI_Isendrecv_replace: one request over a receive and a send
 *   watch.c     requests finished from progress once a condition holds (pairs, bsend flushes)
 *   retire.c    communicators freed while operations on them are pending
 *   revoke.c    communicators another process revoked (ULFM): their queued receives fail
 *   carrier_ops.h  a communicator's carrier as one operations table, chosen at enabling:
 *   carrier_ucx.c  clampi's matching over UCX active messages (built only with UCX)
 *   carrier_mpi.c  clampi_match_carrier=mpi: the MPI library's own messages on a duplicate of
 *               the communicator carry the data; clampi matches only the receives that
 *               would sit deep in MPI's posted queue (matched probes)
 *
 * Locks: the matcher's lock (engine); per communicator send_lock (sequence number and
 * ucp_am_send_nbx in one step, so the wire order is the sequence order) and recv_lock
 * (arrivals from a sender are matched in sequence order); the request table's lock; the
 * list of finished requests' lock. None is held while another is taken, except recv_lock
 * around the matcher's (always in that order), and the context table's lock (comm.c)
 * around both in revoke.c's walk, which takes it with a trylock. The AM handler runs inside
 * UCX's progress, under UCX's worker lock, and takes recv_lock and the matcher's: no UCX
 * call that takes the worker's lock (releasing an arrival) is made under either of them. */
#ifndef CLAMPI_MSG_MSG_INTERNAL_H
#define CLAMPI_MSG_MSG_INTERNAL_H
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/datatype.h"
#include "msg/carrier_ops.h"
#include "msg/msg.h"

#define CLAMPI_MSG_AM_ID 11
#define CLAMPI_MSG_ACK_AM_ID 12      /* synchronous send: the receiver's "matched" back to the sender */
#define CLAMPI_MSG_MAX_CONTEXTS 1024 /* 2^CLAMPI_MSG_CONTEXT_BITS */
#define CLAMPI_MSG_CONTEXT_BITS 10
#define CLAMPI_MSG_EPOCH_MASK ((1u << (32 - CLAMPI_MSG_CONTEXT_BITS)) - 1)
#define CLAMPI_MSG_EAGER_MAX 8192 /* bytes; larger messages go by rendezvous */

/* Active-message header. */
typedef struct clampi_msg_hdr {
    uint32_t context; /* context id | epoch << CLAMPI_MSG_CONTEXT_BITS */
    int32_t source;   /* rank in the communicator */
    int32_t tag;
    uint32_t seq; /* per (communicator, sender, receiver) */
    uint64_t bytes;
    uint64_t sync; /* synchronous send: the sender's request (acknowledged when matched); 0 */
} clampi_msg_hdr;

#define CLAMPI_MSG_INLINE 224 /* eager payloads up to this size live inside the descriptor */

/* An arrived message, while unexpected or being delivered (pooled: pool.c). */
struct clampi_msg {
    clampi_msg_hdr hdr;
    void *data;              /* eager: a copy of the payload (inline_data, or malloc) */
    void *rndv_desc;         /* rendezvous: UCX's data descriptor */
    struct clampi_msg *next; /* reorder stash */
    MPI_Message wire;        /* carrier mpi (carried = 1): the MPI library's message (matched probe) */
    int carried;
    unsigned char inline_data[CLAMPI_MSG_INLINE];
};

struct clampi_mreq {
    MPI_Request mpi;  /* MPI_REQUEST_NULL for an internal request */
    int internal;     /* a blocking call's own: no MPI handle; done when `finished` is set */
    int shell;        /* the handle is a pooled persistent request (request.c), not a generalized one */
    _Atomic int refs; /* MPI's (dropped in free_fn) + pins by CMPIX_ completion calls */
    int is_recv;
    clampi_mcomm *mc;
    MPI_Comm comm;
    /* user buffer */
    void *buf;
    int count;
    MPI_Datatype type; /* a receive's derived type: clampi's duplicate (the program may
                              * free its own while the receive is pending, as MPI allows) */
    int type_dup;
    size_t capacity; /* bytes the buffer holds */
    int contig;
    ptrdiff_t contig_offset; /* true lb of a contiguous type */
    void *tmp;               /* packed bytes (send) / staging (receive) */
    size_t staged;           /* bytes in tmp (receive) */
    clampi_msg_hdr hdr;      /* send: stays valid until UCX is done */
    int sync;                /* synchronous send: finished when sent and acknowledged */
    _Atomic int sync_parts;  /* of those two, still to come */
    /* a synchronous send in its communicator's awaiting_ack list (transport_ucx.c) */
    struct clampi_mreq *ack_next, *ack_prev;
    int ack_tracked; /* listed at sending: only where the MPI has ULFM (revocations happen) */
    int ack_listed;
    int ack_claimed; /* its acknowledgement part was done: by the acknowledgement or by a revocation */
    /* result */
    int source, tag, error, cancelled;
    size_t bytes;
    _Atomic int finished; /* transfer over, and (generalized handle) MPI_Grequest_complete done */
    _Atomic int handoff;  /* completion and MPI_Request_free each add 1: the second frees */
    _Atomic int handed;   /* release before UCX gets r, acquire in UCX's callbacks: the
                              * hand-over through UCX is visible to TSan (UCX is not instrumented) */
    int done_kind;        /* why it is on progress.c's done list (CLAMPI_DONE_) */
    struct clampi_mreq *done_next, *table_next;
    MPI_Request wire_req;          /* carrier mpi: MPI_Imrecv of the matched message */
    int post_source, post_tag;     /* carrier mpi: the receive's own source and tag */
    int wire_fill;                 /* carrier mpi: status from wire_req (a receive handed to MPI) */
    struct clampi_mreq *wire_next; /* carrier mpi: list of those in flight */
};

/* The communicator whose error handler a request's error goes to: its own, or, once the
 * program freed it (retire.c), MPI_COMM_WORLD's (the handle is gone). */
static inline MPI_Comm clampi_mreq_err_comm(const clampi_mreq *r) {
    return r->mc && atomic_load_explicit(&r->mc->retired, memory_order_acquire) ? MPI_COMM_WORLD : r->comm;
}

/* Work clampi_msg_progress does for a request that finished inside UCX's callbacks. */
enum {
    CLAMPI_DONE_GREQ = 1, /* MPI_Grequest_complete, then `finished` */
    CLAMPI_DONE_RELEASE,  /* persistent handle the program freed before: release it */
    CLAMPI_DONE_UNPIN,    /* drop the last reference (the request's memory) */
};

/* options.c: the engine configuration for comm from info (may be MPI_INFO_NULL) and the
 * environment. MPI_SUCCESS or MPI_ERR_INFO_VALUE (with a message on stderr). */
int clampi_msg_options(MPI_Info info, clampi_match_config *cfg);
/* The carrier (CLAMPI_CARRIER_) and, for the MPI carrier, the receives left to MPI. */
int clampi_msg_carrier_options(MPI_Info info, int *carrier, unsigned *native_base, unsigned *native_cap);

clampi_mcomm *clampi_msg_comm_by_context(uint32_t ctx); /* for the AM handler */
/* fn(mc, its program's communicator) for each enabled communicator not retired, none of
 * them enabled, retired or released meanwhile (fn must not enable or free one). 0: another
 * thread walks or changes the table now (nothing visited). */
int clampi_msg_comm_visit(void (*fn)(clampi_mcomm *mc, MPI_Comm comm));
void clampi_msg_comm_drop_handle(clampi_mcomm *mc);        /* retirement: mc->comm is MPI_COMM_NULL from now */
void clampi_msg_disable_all_local(void);                   /* at MPI_Finalize */
void clampi_msg_comm_release(clampi_mcomm *mc, int force); /* its context id and state gone */
void clampi_msg_comm_abandon(clampi_mcomm *mc); /* MPI_Finalize, requests still name it: endpoints and id only */

/* watch.c: *request, a clampi request of mc (may be NULL) with nothing of its own to
 * transfer (tmp, or NULL, freed with it), finishes once ready(ctx, r) returns 1, asked from
 * progress; ready then sets r's result and owns ctx no more. An MPI error code (nothing
 * made; ctx and tmp stay the caller's). */
typedef int (*clampi_watch_fn)(void *ctx, clampi_mreq *r);
int clampi_msg_watched(clampi_mcomm *mc, int is_recv, void *tmp, clampi_watch_fn ready, void *ctx,
                       MPI_Request *request);

/* revoke.c: communicators another process revoked (ULFM); from clampi's waits, after a
 * call of MPI's progress (clampi_msg_poke_mpi) */
void clampi_msg_revocation_poll(void);
/* The code registered for revoked communicators (0: the MPI has no ULFM). */
int clampi_msg_revocation_error(void);
/* At retirement, while mc->comm is still the program's: a revocation not seen yet fails the
 * receives in mc's queue now (no poll asks about a retired communicator). */
void clampi_msg_revocation_check(clampi_mcomm *mc);
/* A receive just queued on mc: had mc been revoked meanwhile, the receives in its queue fail
 * again (either that emptying sees this one, or this load sees the mark). */
static inline void clampi_msg_queued_recv(clampi_mcomm *mc) {
    int code = atomic_load(&mc->revoked);
    if (__builtin_expect(code != 0, 0)) mc->ops->fail_posted(mc, code);
}

/* retire.c: communicators freed while operations on them were pending */
void clampi_msg_retire(clampi_mcomm *mc);          /* mc->comm is gone; mc stays until nothing names it */
extern _Atomic int clampi_msg_retired_n;           /* retired, not yet released (and closes under way) */
void clampi_msg_retired_sweep(void);               /* release those done (from progress; not in UCX callbacks) */
void clampi_msg_retired_release_all(void);         /* MPI_Finalize */
void clampi_msg_drop_unexpected(clampi_mcomm *mc); /* arrivals never to be received, freed */
/* For clampi_matcher_drain: pushes the message (cookie) on the list *arg (clampi_msg **),
 * to be dropped once the locks are let go (UCX calls that take its worker's lock wait). */
void clampi_msg_collect(uintptr_t cookie, void *arg);
static inline void clampi_msg_comm_ref(clampi_mcomm *mc) {
    atomic_fetch_add_explicit(&mc->live, 1, memory_order_relaxed);
}
static inline void clampi_msg_comm_unref(clampi_mcomm *mc) { /* the last access to mc */
    atomic_fetch_sub_explicit(&mc->live, 1, memory_order_release);
}

/* progress.c */
int clampi_msg_transport_init(int ucx);  /* finalize hook once; ucx: the UCX carrier's worker too; MPI error code */
void clampi_msg_progress_from_mpi(void); /* the same, called inside MPI's own progress: no MPI call */
void clampi_msg_reap(void);              /* only the second half: requests that finished are marked so (no UCX call) */
void clampi_msg_free(clampi_msg *m);     /* an unexpected message never received */
void clampi_msg_unpack_into(clampi_mreq *r, const void *data, size_t bytes); /* at most r->capacity */
/* MPI_Pack of count elements into bytes at out, bytes above INT_MAX included (progress.c). */
int clampi_msg_pack(const void *buf, int count, MPI_Datatype type, void *out, size_t bytes, MPI_Comm comm);
void clampi_msg_finish(clampi_mreq *r); /* transfer over: queue for MPI completion */
void clampi_msg_send_started(void);

/* pool.c: zeroed objects of a kind from a free list (malloc only while the lists are cold) */
enum { CLAMPI_POOL_MREQ, CLAMPI_POOL_MSG, CLAMPI_POOL_KINDS };
void *clampi_pool_get(int kind);
void clampi_pool_put(int kind, void *obj);

/* A datatype's facts from the one process-wide table (common/datatype.h), copied into *f.
 * 0, or -1 for MPI_DATATYPE_NULL / an invalid type. */
static inline int clampi_msg_type_facts(MPI_Datatype type, clampi_type_info *f) {
    const clampi_type_info *ti;
    if (clampi_type_info_get(type, &ti, f) != 0) return -1;
    if (ti != f) *f = *ti;
    return 0;
}

/* A receive's or send's buffer: contiguous (one block starting at the true lower bound)? */
static inline void clampi_msg_layout(clampi_mreq *r, int count, const clampi_type_info *tf) {
    r->contig = clampi_type_runs_contiguous(tf) || count == 0;
    r->contig_offset = r->contig ? tf->true_lb : 0;
    r->capacity = (size_t)count * (size_t)tf->size;
}

/* An MPI request handle (an int or a pointer) mixed for hashing: the request table and the
 * MPI carrier's set of MPI's receives take their slot from its high bits. */
static inline uint64_t clampi_msg_handle_mix(MPI_Request h) {
    uint64_t v = 0;
    memcpy(&v, &h, sizeof h < sizeof v ? sizeof h : sizeof v);
    return v * 0x9e3779b97f4a7c15ull;
}

/* request.c. internal = 1: a request the program never sees (MPI_Send, MPI_Recv ...):
 * no MPI generalized request, completed by clampi_mreq_wait_internal. */
int clampi_mreq_create(clampi_mcomm *mc, int is_recv, void *buf, int count, MPI_Datatype type, clampi_mreq **out);
int clampi_mreq_create_ex(clampi_mcomm *mc, int is_recv, int internal, void *buf, int count, MPI_Datatype type,
                          const clampi_type_info *tf, clampi_mreq **out);
/* Progresses until the internal request r is finished; its status into *status (may be
 * MPI_STATUS_IGNORE); frees r; returns r's error (not raised). */
int clampi_mreq_wait_internal(clampi_mreq *r, MPI_Status *status);
/* MPI's progress, without completing anything of the program's: a probe that receives
 * nothing (request.c). clampi's waits call it every 16th poll: a process waiting in clampi
 * is often the target of a peer's RMA, which on MPICH (no progress hook) moves only when the
 * target enters MPI's progress. */
void clampi_msg_poke_mpi(void);
clampi_mreq *clampi_mreq_pin(MPI_Request req);                               /* NULL if not clampi's */
int clampi_mreq_pin_many(int n, const MPI_Request *reqs, clampi_mreq **out); /* each or NULL; returns how many */
/* A finished request completed by a completion call: *handle = MPI_REQUEST_NULL, the handle
 * released (back to the pool, or MPI's generalized request freed). The caller's pin stays. */
void clampi_mreq_complete(clampi_mreq *r, MPI_Request *handle);
/* A finished request the program freed with MPI_Request_free earlier: its handle released. */
void clampi_mreq_freed_and_finished(clampi_mreq *r);

/* persist.c: the slot of the request a persistent handle h stands for now (MPI_REQUEST_NULL
 * while inactive), or NULL when h is not one; MPI_Request_free of such a handle. */
MPI_Request *clampi_msg_persistent(MPI_Request h);
extern _Atomic int clampi_msg_npersist; /* persistent requests that exist now */
static inline int clampi_msg_persist_live(void) {
    return atomic_load_explicit(&clampi_msg_npersist, memory_order_relaxed) != 0;
}
int clampi_msg_persistent_free(MPI_Request *h);
/* Whether the MPI half of the persistent handle whose slot is inner is started with each
 * start (leave() deactivates it); how many persistent handles have an inner request now, and
 * how many are MPI_PROC_NULL stand-ins (none of either: MPI's own completion calls take the
 * handles as they are; Intel MPI 2021's MPI_Waitany returns an inactive MPI_PROC_NULL
 * persistent request as completed, so a stand-in is never passed to it). */
int clampi_msg_persistent_started(MPI_Request *inner);
void clampi_msg_persist_comm_gone(MPI_Comm comm); /* comm left clampi: its persistent requests forget it */
extern _Atomic int clampi_msg_ninner, clampi_msg_nproxy;

/* complete_hooks.c: the completion calls once persistent requests exist or a hook is set */
extern _Atomic int clampi_msg_hooked;
void clampi_msg_hooks_need(void); /* from now on the completion calls take the hooked path */
static inline int clampi_msg_hooks_on(void) { return atomic_load_explicit(&clampi_msg_hooked, memory_order_acquire); }
int clampi_msg_hooked_wait(MPI_Request *request, MPI_Status *status);
int clampi_msg_hooked_test(MPI_Request *request, int *flag, MPI_Status *status);
int clampi_msg_hooked_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int clampi_msg_hooked_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int clampi_msg_hooked_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int clampi_msg_hooked_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int clampi_msg_hooked_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                               MPI_Status statuses[]);
int clampi_msg_hooked_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                               MPI_Status statuses[]);
int clampi_msg_hooked_request_free(MPI_Request *request);
int clampi_msg_hooked_cancel(MPI_Request *request);
int clampi_msg_hooked_get_status(MPI_Request request, int *flag, MPI_Status *status);
int clampi_mreq_handles_persistent(void); /* CLAMPI_MATCH_HANDLES in effect */
void clampi_mreq_shells_free(void);       /* at MPI_Finalize: the pooled handles */
void clampi_mreq_unpin(clampi_mreq *r);
void clampi_mreq_detach(clampi_mreq *r); /* r names no communicator any more (its reference dropped) */
int clampi_mreq_query(void *extra, MPI_Status *status);
/* MPICH's MPI_Pack / MPI_Unpack refuse MPI_BOTTOM (NULL): count elements of an
 * absolute-address type as one element of *shifted (free it) at the non-NULL *base. */
void clampi_msg_bottom_type(int count, MPI_Datatype type, MPI_Datatype *shifted, void **base);

/* p2p.c: the send behind CMPIX_Isend (sync = 1: CMPIX_Issend). */
int clampi_msg_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, int sync,
                     MPI_Request *request);
void clampi_msg_probe_status(const clampi_msg *m, MPI_Status *status); /* source, tag, count of m */

/* carrier_mpi.c (clampi_match_carrier=mpi): what the rest of the layer calls outside the
 * carrier's table (carrier_ops.h). */
void clampi_carrier_discard(clampi_msg *m); /* a message never received: taken from MPI, dropped */
/* Nonblocking receives handed to MPI's own queue, tracked until completed (their count
 * decides when clampi takes deeper receives). */
static inline int clampi_carrier_tracking(void) {
    return atomic_load_explicit(&clampi_carrier_n.nnative, memory_order_relaxed) != 0;
}
/* A completion call has the carrier's work to do: a communicator on the MPI carrier, or a
 * receive in MPI's queue still tracked (its communicator may have been the last one, freed
 * before the receive completed: completing it lets that communicator go). */
static inline int clampi_carrier_watching(void) { return clampi_carrier_active() || clampi_carrier_tracking(); }
/* Nothing of clampi's point-to-point in the process (no communicator on the MPI carrier, no
 * request of clampi's, no hook, no receive tracked or in flight): a completion call is MPI's
 * own, reached as a tail call. The carrier's count first: a carrier job pays one load. */
static inline int clampi_msg_mpi_only(void) {
    return !clampi_carrier_active() && !clampi_mreq_live() && !clampi_msg_hooks_on() && !clampi_carrier_tracking();
}
/* The code the wire's error handler saw during this thread's last call on the wire, or 0:
 * MPICH 5 returns MPI_SUCCESS from a call whose error went to that handler (carrier_mpi.c).
 * clampi_wire_handled: the program's own handler took it (then MPI's return stands). */
extern _Thread_local CLAMPI_MSG_TLS int clampi_wire_code;
extern _Thread_local CLAMPI_MSG_TLS int clampi_wire_handled;
/* Set while clampi tests a request it reports itself (a half of MPI_Isendrecv): the wire's
 * handler then records the code and passes nothing to the program's handler. */
extern _Thread_local CLAMPI_MSG_TLS int clampi_wire_quiet;
/* Tracked receives that completed in a call (before: the handles, after: what the call
 * left; all: the call finished every one, so a persistent request that kept its handle
 * completed too) are forgotten. */
void clampi_carrier_untrack(const MPI_Request *before, const MPI_Request *after, int n, int all);
void clampi_carrier_untrack_one(MPI_Request h); /* the same for one request */
int clampi_carrier_tracked(MPI_Request h);      /* h is a tracked receive (started, not completed) */
void clampi_carrier_forget(MPI_Request req);    /* MPI_Request_free of a tracked receive */

/* ---- the UCX carrier (transport_ucx.c, comm_ucx.c, endpoints.c) ----------------------------
 * Built only with UCX (CLAMPI_HAVE_UCX); without it every communicator is on the MPI
 * carrier (options.c), so nothing below is reached but the calls that find nothing to do. */
#if CLAMPI_HAVE_UCX
int clampi_msg_ucx_init(void);      /* the worker and its AM handlers, once; MPI error code */
void clampi_msg_ucx_stop(void);     /* MPI_Finalize, first: the progress service lets go */
void clampi_msg_ucx_progress(void); /* the worker's progress and queued acknowledgements */
void clampi_msg_ucx_fini(void);     /* MPI_Finalize: endpoints closed, worker destroyed */
ucp_worker_h clampi_msg_worker(void);
struct clampi_ucx_poller *clampi_msg_poller(void); /* the worker's (services/ucx/service.h) */
int clampi_msg_send(clampi_mreq *r, int dest, int tag, const void *data, size_t bytes); /* r->sync: ssend */
void clampi_msg_deliver(clampi_msg *m, clampi_mreq *r);                                 /* a matched receive */
void clampi_msg_ucx_free(clampi_msg *m); /* an arrived message never received */
/* mc was revoked: its arrivals, queued or to come, are dropped, and their senders released */
void clampi_msg_ucx_drop_revoked(clampi_mcomm *mc);
/* mc was revoked: its synchronous sends waiting for an acknowledgement end with code */
void clampi_msg_ucx_release_sync_senders(clampi_mcomm *mc, int code);
/* comm_ucx.c: a communicator's endpoints (collective over mc->comm), barrier, closing. */
int clampi_msg_ucx_enable(clampi_mcomm *mc); /* local: per-peer arrays */
/* known: every member joined the endpoint table before (clampi_ucx_peers_known: local) */
int clampi_msg_ucx_connect(clampi_mcomm *mc, int known);
int clampi_msg_ucx_barrier(clampi_mcomm *mc);
void clampi_msg_ucx_close_forced(clampi_mcomm *mc); /* MPI_Finalize */
void clampi_msg_ucx_disconnect(clampi_mcomm *mc);
void clampi_msg_ucx_close_later(clampi_mcomm *mc); /* retired: under retire.c's lock */
void clampi_msg_ucx_closes_reap(int all);          /* under retire.c's lock */
/* endpoints.c: the message worker's endpoints, one per peer process, made at first use.
 * Collective over comm (local if known: every member joined before); MPI code. eps[r] may
 * stay NULL until clampi_msg_ep; *world (shared endpoints only, else NULL) is the
 * communicator's map to MPI_COMM_WORLD ranks. */
int clampi_msg_eps_get(MPI_Comm comm, int known, ucp_ep_h *eps, int *shared, int **world);
void clampi_msg_eps_close_all(void); /* MPI_Finalize */
ucp_ep_h clampi_msg_ep_connect(clampi_mcomm *mc, int r);
uint64_t clampi_msg_eps_made(void); /* endpoints this process has made so far */
/* The endpoint to rank r of mc, made now if this process never sent to that peer (NULL:
 * UCX refused it). Not inside UCX's callbacks. */
static inline ucp_ep_h clampi_msg_ep(clampi_mcomm *mc, int r) {
    ucp_ep_h ep = __atomic_load_n(&mc->eps[r], __ATOMIC_ACQUIRE);
    return ep ? ep : clampi_msg_ep_connect(mc, r);
}
#else
/* A UCX carrier's call in a build without it: a bug (no message, request or communicator
 * of that carrier can exist). Says which on stderr and aborts. */
__attribute__((noreturn)) void clampi_msg_no_ucx(const char *call);
static inline int clampi_msg_ucx_init(void) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline void clampi_msg_ucx_stop(void) {}
static inline void clampi_msg_ucx_progress(void) {}
static inline void clampi_msg_ucx_fini(void) {}
static inline int clampi_msg_send(clampi_mreq *r, int dest, int tag, const void *data, size_t bytes) {
    clampi_msg_no_ucx("clampi_msg_send");
}
static inline void clampi_msg_deliver(clampi_msg *m, clampi_mreq *r) { clampi_msg_no_ucx("clampi_msg_deliver"); }
static inline void clampi_msg_ucx_free(clampi_msg *m) { clampi_msg_no_ucx("clampi_msg_ucx_free"); }
static inline void clampi_msg_ucx_drop_revoked(clampi_mcomm *mc) { clampi_msg_no_ucx("clampi_msg_ucx_drop_revoked"); }
static inline void clampi_msg_ucx_release_sync_senders(clampi_mcomm *mc, int code) {
    (void)code;
    clampi_msg_no_ucx("clampi_msg_ucx_release_sync_senders");
}
static inline int clampi_msg_ucx_enable(clampi_mcomm *mc) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline int clampi_msg_ucx_connect(clampi_mcomm *mc, int known) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline int clampi_msg_ucx_barrier(clampi_mcomm *mc) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline void clampi_msg_ucx_close_forced(clampi_mcomm *mc) {}
static inline void clampi_msg_ucx_disconnect(clampi_mcomm *mc) {}
static inline void clampi_msg_ucx_close_later(clampi_mcomm *mc) {}
static inline void clampi_msg_ucx_closes_reap(int all) {}
static inline uint64_t clampi_msg_eps_made(void) { return 0; }
#endif

#endif
