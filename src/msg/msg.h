/* Matched point-to-point messages over UCX active messages (include/clampi/match.h).
 *
 *   options.c   info keys / environment -> engine configuration (the one place)
 *   comm.c      CMPIX_Comm_enable/disable: context ids, matchers, endpoints, lookup
 *   progress.c  completion of clampi's requests, progress, and how each MPI's waits reach it
 *   transport_ucx.c, comm_ucx.c, endpoints.c   the UCX carrier (built only with UCX): the
 *               process's UCX worker, the AM handler (ordering, eager / rendezvous), sends,
 *               a communicator's endpoints
 *   request.c   clampi requests and their handles (pooled persistent MPI requests, or
 *               generalized ones), internal ones (blocking calls) without; handle -> request
 *   pool.c      free lists for requests and arrived messages (no malloc per message)
 *   dtype.c     size and contiguity of the predefined datatypes, cached (no query per message)
 *   p2p.c       CMPIX_Isend/Irecv/Send/Recv/Iprobe/Probe/Cancel
 *   complete.c  CMPIX_Wait/Test/Waitall/Waitany/Testall
 *   carrier.c   clampi_match_carrier=mpi: the MPI library's own messages on a duplicate of
 *               the communicator carry the data; clampi matches only the receives that
 *               would sit deep in MPI's posted queue (matched probes)
 *
 * Locks: the matcher's lock (engine); per communicator send_lock (sequence number and
 * ucp_am_send_nbx in one step, so the wire order is the sequence order) and recv_lock
 * (arrivals from a sender are matched in sequence order); the request table's lock; the
 * list of finished requests' lock. None is held while another is taken, except recv_lock
 * around the matcher's (always in that order). */
#ifndef CLAMPI_MSG_MSG_H
#define CLAMPI_MSG_MSG_H
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/datatype.h"
#include "common/wait.h"
#include "match/match.h"

/* UCX's handles, opaque here: only the UCX carrier's files (built with UCX) use them. */
typedef struct ucp_ep *ucp_ep_h;
typedef struct ucp_worker *ucp_worker_h;

/* Thread-locals read on every message: initial-exec, no __tls_get_addr call (the library is
 * loaded at start-up, by the link or LD_PRELOAD; a few bytes of static TLS). */
#define CLAMPI_MSG_TLS __attribute__((tls_model("initial-exec")))

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
typedef struct clampi_msg {
    clampi_msg_hdr hdr;
    void *data;              /* eager: a copy of the payload (inline_data, or malloc) */
    void *rndv_desc;         /* rendezvous: UCX's data descriptor */
    struct clampi_msg *next; /* reorder stash */
    MPI_Message wire;        /* carrier mpi (carried = 1): the MPI library's message (matched probe) */
    int carried;
    unsigned char inline_data[CLAMPI_MSG_INLINE];
} clampi_msg;

typedef struct clampi_mcomm {
    MPI_Comm comm;
    uint32_t context;
    int rank, size, tag_ub;
    clampi_match_config cfg;
    clampi_matcher *matcher;
    ucp_ep_h *eps; /* per rank of comm: endpoints.c's shared ones, or its own (eps_shared 0) */
    int eps_shared;
    int *world; /* shared endpoints: comm rank -> MPI_COMM_WORLD rank (made at first use) */
    pthread_mutex_t send_lock;
    uint32_t *seq_out;
    pthread_mutex_t recv_lock;
    uint32_t *seq_in;
    clampi_msg **stash; /* per sender: arrivals ahead of their turn, sorted by seq */
    /* carrier mpi (carrier.c), under recv_lock when `threaded` */
    int carrier;   /* CLAMPI_CARRIER_UCX or CLAMPI_CARRIER_MPI */
    MPI_Comm wire; /* the duplicate the messages travel on */
    int threaded;  /* MPI_THREAD_MULTIPLE: take recv_lock */
    /* The native depth (carrier.c, "native depth"): receives left in MPI's own queue before
     * clampi queues them. It starts at native_base, doubles up to native_cap while clampi's
     * receives match in posting order, and falls back to native_base when a match skips an
     * older receive (in clampi's queue or in MPI's). */
    unsigned native_base, native_cap;
    _Atomic unsigned native_max;
    unsigned fifo_run, fifo_gen;      /* clampi's in-order matches since native_gen was fifo_gen (recv_lock) */
    _Atomic unsigned native_gen;      /* fall-backs seen at completion so far */
    unsigned native_seq, native_done; /* MPI's receives tracked; the next expected to leave (native_lock) */
    _Atomic int native_live;          /* nonblocking receives now in MPI's own queue */
    _Atomic long posted, unexpected;  /* entries in clampi's queues (read by progress unlocked) */
    /* MPI_Comm_free with operations pending (retire.c): they complete normally, so the
     * communicator's state stays, without its MPI handle, until nothing names it. */
    _Atomic long live;   /* nonblocking requests and matched-probe messages naming mc */
    _Atomic int retired; /* freed by the program; on retire.c's list */
    uint32_t epoch;      /* of its context id: a message of an earlier communicator with that id is stale */
    int serial;          /* agreed by the members at enabling, never reused in this process (stats' commN) */
    void *owner;         /* the preload's record of it (match_comm.c), or NULL */
    struct clampi_mcomm *retired_next;
} clampi_mcomm;

enum { CLAMPI_CARRIER_UCX, CLAMPI_CARRIER_MPI };

typedef struct clampi_mreq {
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
} clampi_mreq;

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

/* comm.c */
/* The last lookup of each thread (comm.c), valid while no communicator was enabled or
 * disabled since (the generation changes first). Inline: every wrapped call asks. */
typedef struct {
    unsigned gen;
    MPI_Comm comm;
    clampi_mcomm *mc;
} clampi_msg_comm_cache;
extern _Atomic unsigned clampi_msg_comm_generation;
extern _Thread_local CLAMPI_MSG_TLS clampi_msg_comm_cache clampi_msg_comm_last;
clampi_mcomm *clampi_msg_comm_lookup(MPI_Comm comm);
static inline clampi_mcomm *clampi_msg_comm(MPI_Comm comm) {
    if (clampi_msg_comm_last.comm == comm && comm != MPI_COMM_NULL &&
        clampi_msg_comm_last.gen == atomic_load_explicit(&clampi_msg_comm_generation, memory_order_acquire))
        return clampi_msg_comm_last.mc;
    return clampi_msg_comm_lookup(comm);
}
clampi_mcomm *clampi_msg_comm_by_context(uint32_t ctx);    /* for the AM handler */
void clampi_msg_disable_all_local(void);                   /* at MPI_Finalize */
void clampi_msg_comm_release(clampi_mcomm *mc, int force); /* its context id and state gone */
void clampi_msg_comm_abandon(clampi_mcomm *mc); /* MPI_Finalize, requests still name it: endpoints and id only */

/* retire.c: communicators freed while operations on them were pending */
void clampi_msg_retire(clampi_mcomm *mc);  /* mc->comm is gone; mc stays until nothing names it */
extern _Atomic int clampi_msg_retired_n;   /* retired, not yet released (and closes under way) */
void clampi_msg_retired_sweep(void);       /* release those done (from progress; not in UCX callbacks) */
void clampi_msg_retired_release_all(void); /* MPI_Finalize */
static inline void clampi_msg_comm_ref(clampi_mcomm *mc) {
    atomic_fetch_add_explicit(&mc->live, 1, memory_order_relaxed);
}
static inline void clampi_msg_comm_unref(clampi_mcomm *mc) { /* the last access to mc */
    atomic_fetch_sub_explicit(&mc->live, 1, memory_order_release);
}

/* progress.c */
int clampi_msg_transport_init(int ucx);  /* finalize hook once; ucx: the UCX carrier's worker too; MPI error code */
void clampi_msg_progress(void);          /* UCX progress + MPI completion of finished requests */
void clampi_msg_progress_from_mpi(void); /* the same, called inside MPI's own progress: no MPI call */
void clampi_msg_reap(void);              /* only the second half: requests that finished are marked so (no UCX call) */
/* Waiting loops: common/wait.h's policy with budget clampi_msg_spin (CLAMPI_MATCH_SPIN, or
 * CLAMPI_MATCH_SPIN_OVERSUB on an oversubscribed node; set by clampi_msg_transport_init). */
extern unsigned clampi_msg_spin;
static inline void clampi_msg_pause(unsigned *spins) { clampi_wait_pause(spins, clampi_msg_spin); }
void clampi_msg_free(clampi_msg *m);                                         /* an unexpected message never received */
void clampi_msg_unpack_into(clampi_mreq *r, const void *data, size_t bytes); /* at most r->capacity */
void clampi_msg_finish(clampi_mreq *r); /* transfer over: queue for MPI completion */
/* Send requests made and not yet finished (MPI_Finalize waits for them: a rendezvous send
 * finishes only when its receiver has pulled the data). */
long clampi_msg_sends_in_flight(void);
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
clampi_mreq *clampi_mreq_pin(MPI_Request req);                               /* NULL if not clampi's */
int clampi_mreq_pin_many(int n, const MPI_Request *reqs, clampi_mreq **out); /* each or NULL; returns how many */
/* A finished request completed by a completion call: *handle = MPI_REQUEST_NULL, the handle
 * released (back to the pool, or MPI's generalized request freed). The caller's pin stays. */
void clampi_mreq_complete(clampi_mreq *r, MPI_Request *handle);
/* A finished request the program freed with MPI_Request_free earlier: its handle released. */
void clampi_mreq_freed_and_finished(clampi_mreq *r);
int clampi_mreq_handles_persistent(void); /* CLAMPI_MATCH_HANDLES in effect */
void clampi_mreq_shells_free(void);       /* at MPI_Finalize: the pooled handles */
void clampi_mreq_unpin(clampi_mreq *r);
void clampi_mreq_detach(clampi_mreq *r); /* r names no communicator any more (its reference dropped) */
int clampi_mreq_query(void *extra, MPI_Status *status);
extern _Atomic long clampi_mreq_nlive;     /* request.c */
static inline int clampi_mreq_live(void) { /* any of clampi's requests known to MPI */
    return atomic_load_explicit(&clampi_mreq_nlive, memory_order_relaxed) != 0;
}
/* MPI_Request_free for the preload: a clampi request's MPI handle is freed once the transfer
 * is over (now, or by its completion); other requests go to PMPI_Request_free. */
int clampi_msg_request_free(MPI_Request *request);
/* MPICH's MPI_Pack / MPI_Unpack refuse MPI_BOTTOM (NULL): count elements of an
 * absolute-address type as one element of *shifted (free it) at the non-NULL *base. */
void clampi_msg_bottom_type(int count, MPI_Datatype type, MPI_Datatype *shifted,
                            void **base); /* any clampi request not yet freed by MPI? */

/* complete.c: MPI's completion calls on any mix of clampi's and MPI's requests (the clampi
 * request's error in MPI_ERROR, raised on its communicator); MPI's own when no clampi
 * request lives. */
int clampi_msg_wait(MPI_Request *request, MPI_Status *status);
int clampi_msg_test(MPI_Request *request, int *flag, MPI_Status *status);
int clampi_msg_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int clampi_msg_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int clampi_msg_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int clampi_msg_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int clampi_msg_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int clampi_msg_testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int clampi_msg_get_status(MPI_Request request, int *flag, MPI_Status *status); /* MPI_Request_get_status */

/* p2p.c: the send behind CMPIX_Isend (sync = 1: CMPIX_Issend). */
int clampi_msg_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, int sync,
                     MPI_Request *request);

/* carrier.c (clampi_match_carrier=mpi). Every call takes a communicator enabled with it. */
int clampi_carrier_enable(clampi_mcomm *mc, unsigned native_base, unsigned native_cap); /* collective (MPI_Comm_dup) */
/* Local, before the matcher goes: receives still in clampi's queue are handed to MPI (they
 * complete as MPI's would after MPI_Comm_free), taken messages nobody received dropped. */
void clampi_carrier_disable(clampi_mcomm *mc);
void clampi_carrier_wire_free(clampi_mcomm *mc); /* once nothing names mc */
/* A send on the wire (sync: synchronous mode); request NULL: blocking. Any arguments (MPI
 * checks them; errors raised on mc->comm). */
int clampi_carrier_send_spin(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                             int sync); /* blocking, while clampi holds receives */
/* A receive, any case (clampi_carrier_recv below takes the depth-0 one first). */
int clampi_carrier_recv_any(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                            MPI_Request *request, MPI_Status *status);
/* Probe: remove = 0: *flag and the status; remove = 1: also *m, the message taken. */
int clampi_carrier_probe(clampi_mcomm *mc, int source, int tag, int remove, int *flag, clampi_msg **m,
                         MPI_Status *status);
/* Receive a message taken by a matched probe into r (a new receive request). */
void clampi_carrier_mrecv(clampi_mreq *r, clampi_msg *m);
void clampi_carrier_discard(clampi_msg *m); /* a message never received: taken from MPI, dropped */
int clampi_carrier_cancel(clampi_mreq *r);  /* 1: it was in clampi's posted queue (now out) */
/* Before a blocking MPI call clampi cannot make nonblocking (communicator creation, the set-up
 * and MPI parts of clampi's own collectives): every receive in clampi's queues goes to MPI's
 * own queue in posting order (as at MPI_Comm_free), so MPI progresses a peer's large send to
 * it inside that call. Messages clampi took stay clampi's. */
void clampi_carrier_release(void);
/* Either carrier: 1 if the receive r was still in clampi's posted queue (now out). */
static inline int clampi_msg_cancel_posted(clampi_mreq *r) {
    return r->mc->carrier == CLAMPI_CARRIER_MPI ? clampi_carrier_cancel(r)
                                                : clampi_matcher_cancel(r->mc->matcher, (uintptr_t)r);
}
void clampi_carrier_progress(void); /* pull arrivals for clampi's posted receives; test in-flight ones */
/* Posted receives in clampi's queues and matched ones in flight, over all communicators:
 * while > 0 no blocking MPI call may be made on the program's behalf (a peer's large send
 * needs this process to pull its message). */
/* The carrier's counts, read by every completion call (inline: no call on that path). */
typedef struct {
    _Atomic int ncarriers; /* communicators on the MPI carrier */
    _Atomic long pending;  /* clampi's posted receives + matched receives in flight */
    _Atomic long nflight;  /* MPI_Imrecv not complete at once */
    _Atomic int nnative;   /* nonblocking receives in MPI's own queue, tracked */
} clampi_carrier_counts;
extern clampi_carrier_counts clampi_carrier_n;
static inline long clampi_carrier_pending(void) {
    return atomic_load_explicit(&clampi_carrier_n.pending, memory_order_relaxed);
}
/* any communicator on the MPI carrier, or receives in flight */
static inline int clampi_carrier_active(void) {
    return atomic_load_explicit(&clampi_carrier_n.ncarriers, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&clampi_carrier_n.nflight, memory_order_relaxed) != 0;
}
/* The code the wire's error handler saw during the last wrapped call on the wire, or 0. MPICH
 * 5 returns MPI_SUCCESS from a call whose error went to a user-defined handler (the wire's,
 * which passes it to the program's communicator): CLAMPI_WIRE returns the code instead, as
 * plain MPI under MPI_ERRORS_RETURN does. */
extern _Thread_local CLAMPI_MSG_TLS int clampi_wire_code;
static inline int clampi_wire_rc(int err) { return err != MPI_SUCCESS ? err : clampi_wire_code; }
#define CLAMPI_WIRE(call) (clampi_wire_code = 0, clampi_wire_rc(call))
/* A send on the wire: MPI's own send, unless blocking while clampi holds receives. */
static inline int clampi_carrier_send(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest,
                                      int tag, int sync, MPI_Request *request) {
    if (request)
        return sync ? CLAMPI_WIRE(PMPI_Issend(buf, count, type, dest, tag, mc->wire, request))
                    : CLAMPI_WIRE(PMPI_Isend(buf, count, type, dest, tag, mc->wire, request));
    if (!clampi_carrier_pending())
        return sync ? CLAMPI_WIRE(PMPI_Ssend(buf, count, type, dest, tag, mc->wire))
                    : CLAMPI_WIRE(PMPI_Send(buf, count, type, dest, tag, mc->wire));
    return clampi_carrier_send_spin(mc, buf, count, type, dest, tag, sync);
}
#define CLAMPI_CARRIER_NATIVE_SLOTS 4096 /* the set of MPI's receives: at most half full */
void clampi_carrier_track(MPI_Request h, clampi_mcomm *mc);
/* Room in MPI's own queue for one more of mc's nonblocking receives: fewer than native_max
 * of them there, and the set of tracked handles stays at most half full. */
static inline int clampi_carrier_native_room(const clampi_mcomm *mc) {
    return (unsigned)atomic_load_explicit(&mc->native_live, memory_order_relaxed) <
               atomic_load_explicit(&mc->native_max, memory_order_relaxed) &&
           atomic_load_explicit(&clampi_carrier_n.nnative, memory_order_relaxed) < CLAMPI_CARRIER_NATIVE_SLOTS / 2 - 64;
}
/* A receive; request NULL: blocking, status filled. Any arguments: what clampi's queue
 * cannot hold (MPI_PROC_NULL, bad input) goes to MPI, errors raised on mc->comm. Inline:
 * at depth 0 in one thread (nothing of clampi's ahead, room in MPI's queue) it is MPI's
 * own receive after a few loads. */
static inline int clampi_carrier_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                                      MPI_Request *request, MPI_Status *status) {
    if (!mc->threaded && !mc->posted && !mc->unexpected) {
        if (request) {
            if (clampi_carrier_native_room(mc)) {
                int err = CLAMPI_WIRE(PMPI_Irecv(buf, count, type, source, tag, mc->wire, request));
                if (err == MPI_SUCCESS && source != MPI_PROC_NULL) clampi_carrier_track(*request, mc);
                return err;
            }
        } else if (!clampi_carrier_pending()) {
            return CLAMPI_WIRE(PMPI_Recv(buf, count, type, source, tag, mc->wire, status));
        }
    }
    return clampi_carrier_recv_any(mc, buf, count, type, source, tag, request, status);
}
/* CLAMPI_MATCH_CARRIER=mpi in the environment: the job's collectives (clampi's own and the
 * preload's wrapped ones) run in their nonblocking form, the same choice on every rank. */
int clampi_carrier_job(void);
int clampi_carrier_barrier(MPI_Comm comm);
int clampi_carrier_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm);
int clampi_carrier_dup(MPI_Comm comm, MPI_Comm *out);
/* Completes the MPI request q by testing, taking messages for clampi's receives meanwhile. */
int clampi_carrier_spin(MPI_Request *q, MPI_Status *status);
/* Nonblocking receives handed to MPI's own queue, tracked until completed (their count
 * decides when clampi takes deeper receives). */
static inline int clampi_carrier_tracking(void) {
    return atomic_load_explicit(&clampi_carrier_n.nnative, memory_order_relaxed) != 0;
}
MPI_Comm clampi_carrier_untrack_one(MPI_Request h); /* the same for one request */
/* Returns the communicator of the first tracked receive that completed (its errors are
 * raised there: the wire returns them), or MPI_COMM_NULL. */
MPI_Comm clampi_carrier_untrack(const MPI_Request *before, const MPI_Request *after, int n);
void clampi_carrier_forget(MPI_Request req); /* MPI_Request_free of a tracked receive */

/* errors: raise code through comm's handler (MPI_COMM_WORLD's for MPI_COMM_NULL). */
int clampi_msg_raise(MPI_Comm comm, int code, const char *why);
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
/* comm_ucx.c: a communicator's endpoints (collective over mc->comm), barrier, closing. */
int clampi_msg_ucx_enable(clampi_mcomm *mc); /* local: per-peer arrays */
int clampi_msg_ucx_connect(clampi_mcomm *mc);
int clampi_msg_ucx_barrier(clampi_mcomm *mc);
void clampi_msg_ucx_close_forced(clampi_mcomm *mc); /* MPI_Finalize */
void clampi_msg_ucx_disconnect(clampi_mcomm *mc);
void clampi_msg_ucx_close_later(clampi_mcomm *mc); /* retired: under retire.c's lock */
void clampi_msg_ucx_closes_reap(int all);          /* under retire.c's lock */
/* endpoints.c: the message worker's endpoints, one per peer process, made at first use.
 * Collective over comm; MPI code. eps[r] may stay NULL until clampi_msg_ep; *world (shared
 * endpoints only, else NULL) is the communicator's map to MPI_COMM_WORLD ranks. */
int clampi_msg_eps_get(MPI_Comm comm, ucp_ep_h *eps, int *shared, int **world);
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
static inline int clampi_msg_ucx_enable(clampi_mcomm *mc) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline int clampi_msg_ucx_connect(clampi_mcomm *mc) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline int clampi_msg_ucx_barrier(clampi_mcomm *mc) { return MPI_ERR_UNSUPPORTED_OPERATION; }
static inline void clampi_msg_ucx_close_forced(clampi_mcomm *mc) {}
static inline void clampi_msg_ucx_disconnect(clampi_mcomm *mc) {}
static inline void clampi_msg_ucx_close_later(clampi_mcomm *mc) {}
static inline void clampi_msg_ucx_closes_reap(int all) {}
static inline uint64_t clampi_msg_eps_made(void) { return 0; }
#endif

#endif
