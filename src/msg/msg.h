/* Matched point-to-point messages (include/clampi/match.h for the CMPIX_ calls): what the
 * layers above the message layer (the preload) use. A communicator's carrier and its
 * operations table: msg/carrier_ops.h. The rest is msg/msg_internal.h, for src/msg only. */
#ifndef CLAMPI_MSG_MSG_H
#define CLAMPI_MSG_MSG_H
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wait.h"
#include "match/match.h"

typedef struct clampi_msg clampi_msg;   /* an arrived message (msg_internal.h) */
typedef struct clampi_mreq clampi_mreq; /* a clampi request (msg_internal.h) */

/* UCX's handles, opaque here: only the UCX carrier's files (built with UCX) use them. */
typedef struct ucp_ep *ucp_ep_h;
typedef struct ucp_worker *ucp_worker_h;

/* Thread-locals read on every message: initial-exec, no __tls_get_addr call (the library is
 * loaded at start-up, by the link or LD_PRELOAD; a few bytes of static TLS). */
#define CLAMPI_MSG_TLS __attribute__((tls_model("initial-exec")))

typedef struct clampi_carrier_ops clampi_carrier_ops; /* carrier_ops.h */

typedef struct clampi_mcomm {
    MPI_Comm comm;
    const clampi_carrier_ops *ops; /* its carrier, chosen once at enabling */
    /* comm was revoked (ULFM), here or by another process (revoke.c): the code its calls
     * fail with; the preload leaves comm to MPI from then on. 0: not revoked. */
    _Atomic int revoked;
    uint32_t context;
    int rank, size, tag_ub;
    clampi_match_config cfg;
    clampi_matcher *matcher;
    ucp_ep_h *eps; /* per rank of comm: endpoints.c's shared ones, or its own (eps_shared 0) */
    int eps_shared;
    int *world; /* shared endpoints: comm rank -> MPI_COMM_WORLD rank (made at first use) */
    pthread_mutex_t send_lock;
    uint32_t *seq_out;
    /* carrier ucx: synchronous sends waiting for their acknowledgement, let go here when
     * comm is revoked (transport_ucx.c); ack_lock is never held while calling UCX */
    pthread_mutex_t ack_lock;
    struct clampi_mreq *awaiting_ack;
    pthread_mutex_t recv_lock;
    uint32_t *seq_in;
    clampi_msg **stash; /* per sender: arrivals ahead of their turn, sorted by seq */
    /* carrier mpi (carrier_mpi.c), under recv_lock when `threaded` */
    MPI_Comm wire; /* the duplicate the messages travel on */
    /* its children's freed wires, kept for its next MPI_Comm_dup (carrier_mpi.c, "spare
     * wires"); and the pool and slot of its own wire, if it is one of its parent's */
    struct clampi_wire_pool *pool, *wire_pool;
    int wire_slot;
    /* a receive the program posted in MPI's queue on the wire may still be there, unseen
     * (freed with MPI_Request_free, or not tracked): the wire is freed, never kept, so
     * that no later duplicate's message meets it */
    _Atomic int wire_in_doubt;
    /* retired with receives in MPI's queue: each names mc (live) until it completes, and
     * the wire stays meanwhile (native_lock) */
    int native_hold;
    int threaded; /* MPI_THREAD_MULTIPLE: take recv_lock */
    /* The native depth (carrier_mpi.c, "native depth"): receives left in MPI's own queue before
     * clampi queues them. It starts at native_base, doubles up to native_cap while clampi's
     * receives match in posting order, and falls back to native_base when a match skips an
     * older receive (in clampi's queue or in MPI's). */
    unsigned native_base, native_cap;
    _Atomic unsigned native_max;
    unsigned fifo_run, fifo_gen;      /* clampi's in-order matches since native_gen was fifo_gen (recv_lock) */
    _Atomic unsigned native_gen;      /* fall-backs seen at completion so far */
    unsigned native_seq, native_done; /* MPI's receives tracked; the next expected to leave (native_lock) */
    _Atomic int native_live;          /* nonblocking receives now in MPI's own queue */
    /* Messages MPI matched (in its own queue, clampi's receives handed over included), for
     * the stats line beside the matcher's; at depth 0 there: MPI's search is not visible. */
    _Atomic uint64_t native_matched;
    _Atomic long posted, unexpected; /* entries in clampi's queues (read by progress unlocked) */
    /* MPI_Comm_free with operations pending (retire.c): they complete normally, so the
     * communicator's state stays, without its MPI handle, until nothing names it. */
    _Atomic long live;   /* nonblocking requests and matched-probe messages naming mc */
    _Atomic int retired; /* freed by the program; on retire.c's list */
    uint32_t epoch;      /* of its context id: a message of an earlier communicator with that id is stale */
    int serial;          /* agreed by the members at enabling, never reused in this process (stats' commN) */
    void *owner;         /* the preload's record of it (match_comm.c), or NULL */
    struct clampi_mcomm *retired_next;
} clampi_mcomm;

enum { CLAMPI_CARRIER_UCX, CLAMPI_CARRIER_MPI }; /* the options' choice (clampi_carrier_ops_of) */

/* revoke.c: where the MPI can revoke a communicator (ULFM), the preload gives the test:
 * code_of(comm) is the code comm's calls fail with once the MPI says comm was revoked, 0
 * before; code is that code (MPIX_ERR_REVOKED). Then clampi's waits ask it now and then,
 * and the receives waiting in clampi's queue on a revoked communicator fail with it. */
void clampi_msg_on_revocation(int (*code_of)(MPI_Comm comm), int code);
/* mc's communicator was revoked: marked with code, and the receives in its queue fail. */
void clampi_msg_comm_revoked(clampi_mcomm *mc, int code);

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
/* How a communicator was made from an enabled parent, so that the MPI carrier makes its
 * wire (its private communicator) the same way from the parent's wire: the same group in
 * the same order, none of the program's attributes, and not from a communicator just made
 * (Open MPI 4.1 hangs making one from a new communicator while another thread makes one:
 * tests/pmpi/plain_threads_comm_create.c). Not for MPI_Comm_create_group, which MPICH 4.0
 * crashes in on part of any communicator but MPI_COMM_WORLD (a parent's wire never is):
 * its wire is clampi_carrier_dup of the new communicator (COPY), as without a parent: a
 * split, since Open MPI's MPI_Comm_create_group copies the program's attributes to the new
 * communicator and a duplicate would copy them on. */
typedef enum { CLAMPI_WIRE_DUP, CLAMPI_WIRE_SPLIT, CLAMPI_WIRE_CREATE, CLAMPI_WIRE_COPY } clampi_wire_kind;
typedef struct {
    clampi_wire_kind kind;
    int color, key;  /* SPLIT */
    MPI_Group group; /* CREATE */
    MPI_Comm made;   /* COPY: the new communicator */
} clampi_wire_recipe;
/* CMPIX_Comm_enable with parent's settings (structure, carrier, native depths) instead of
 * an info's: collective over comm, an intracommunicator; errors as CMPIX_Comm_enable's.
 * how: how comm was made from parent (one agreement, after the MPI carrier's wire, which
 * is collective over the parent's wire except for COPY: the parent's processes outside
 * comm call clampi_msg_comm_wire_outside), or NULL (CMPIX_Comm_enable's flow: an agreement
 * first, the wire a split of comm). */
int clampi_msg_comm_enable_like(MPI_Comm comm, const clampi_mcomm *parent, const clampi_wire_recipe *how);
/* A process of parent outside the communicator made (MPI_Comm_split's MPI_UNDEFINED,
 * MPI_Comm_create outside the group): its part in the MPI carrier's wire, which is
 * collective over the parent's wire. */
void clampi_msg_comm_wire_outside(const clampi_mcomm *parent, const clampi_wire_recipe *how);
/* 1 and *mc (NULL: not clampi's) when comm is this thread's last lookup; no call inside, so
 * an entry point that tests it first can reach its carrier as a tail call. */
static inline int clampi_msg_comm_cached(MPI_Comm comm, clampi_mcomm **mc) {
    if (clampi_msg_comm_last.comm != comm || comm == MPI_COMM_NULL ||
        clampi_msg_comm_last.gen != atomic_load_explicit(&clampi_msg_comm_generation, memory_order_acquire))
        return 0;
    *mc = clampi_msg_comm_last.mc;
    return 1;
}
static inline clampi_mcomm *clampi_msg_comm(MPI_Comm comm) {
    clampi_mcomm *mc;
    return clampi_msg_comm_cached(comm, &mc) ? mc : clampi_msg_comm_lookup(comm);
}

/* Waiting loops: common/wait.h's policy with budget clampi_msg_spin (CLAMPI_MATCH_SPIN, or
 * CLAMPI_MATCH_SPIN_OVERSUB on an oversubscribed node; set by clampi_msg_transport_init). */
extern unsigned clampi_msg_spin;
static inline void clampi_msg_pause(unsigned *spins) { clampi_wait_pause(spins, clampi_msg_spin); }

/* Send requests made and not yet finished (MPI_Finalize waits for them: a rendezvous send
 * finishes only when its receiver has pulled the data). */
long clampi_msg_sends_in_flight(void);

extern _Atomic long clampi_mreq_nlive;     /* request.c */
static inline int clampi_mreq_live(void) { /* any of clampi's requests known to MPI */
    return atomic_load_explicit(&clampi_mreq_nlive, memory_order_relaxed) != 0;
}

/* MPI_Request_free for the preload: a clampi request's MPI handle is freed once the transfer
 * is over (now, or by its completion); other requests go to PMPI_Request_free. */
int clampi_msg_request_free(MPI_Request *request);

/* complete.c: MPI's completion calls on any mix of clampi's and MPI's requests (the clampi
 * request's error in MPI_ERROR, raised on its communicator); MPI's own when no clampi
 * request lives. */
int clampi_msg_wait(MPI_Request *request, MPI_Status *status);
int clampi_msg_test(MPI_Request *request, int *flag, MPI_Status *status);
/* The same without raising: the error is returned for the caller to report (src/msg/pair.c). */
int clampi_msg_test_quiet(MPI_Request *request, int *flag, MPI_Status *status);
int clampi_msg_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int clampi_msg_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int clampi_msg_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int clampi_msg_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int clampi_msg_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int clampi_msg_testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int clampi_msg_get_status(MPI_Request request, int *flag, MPI_Status *status); /* MPI_Request_get_status */

/* A hook on the completion calls (complete_hooks.c), set once (the preload's matching
 * profile; libclampi sets none): completed: a request finished (count 1) or was freed (0).
 * From then on every completion call of msg/mpi_entry.c takes the hooked path (before, one
 * load and branch). */
typedef struct {
    void (*completed)(MPI_Request h, int count);
} clampi_msg_request_hooks;
void clampi_msg_hook_requests(const clampi_msg_request_hooks *rows);

/* bsend.c: buffered sends in the program's attached buffer (the preload's MPI_Buffer_attach /
 * _detach, MPI_Bsend, MPI_Ibsend) */
int clampi_msg_buffer_attach(void *buffer, int size);
int clampi_msg_buffer_detach(void *buffer_addr, int *size);
/* On a clampi communicator (valid arguments, dest a rank): completes locally; *request (may
 * be NULL) gets an already complete request. */
int clampi_msg_bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request *request);
/* Anywhere else (an MPI communicator, arguments clampi leaves to MPI): into the program's
 * buffer when clampi holds it, else MPI's own call. */
int clampi_msg_bsend_mpi(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *request);
void clampi_msg_bsend_drain(void); /* waits for every buffered send still in flight */
/* MPI-4.1's buffer calls (MPI_Buffer_flush, MPI_Comm_attach_buffer, ...) come with its
 * MPI_BUFFER_AUTOMATIC. */
#if defined(MPI_BUFFER_AUTOMATIC) && !defined(CLAMPI_MPI_HAS_BUFFER_FLUSH)
#define CLAMPI_MPI_HAS_BUFFER_FLUSH 1
#endif
#ifdef CLAMPI_MPI_HAS_BUFFER_FLUSH
/* MPI-4.1: buffers attached to communicators (clampi's when comm is), and the flushes
 * (comm MPI_COMM_NULL: the process's buffer). */
int clampi_msg_comm_buffer_attach(MPI_Comm comm, void *buffer, int size);
int clampi_msg_comm_buffer_detach(MPI_Comm comm, void *buffer_addr, int *size);
void clampi_msg_comm_buffer_freed(MPI_Comm comm); /* before MPI_Comm_free: detached, as MPI does */
int clampi_msg_buffer_flush(MPI_Comm comm);
int clampi_msg_buffer_iflush(MPI_Comm comm, MPI_Request *request);
#endif

/* persist.c: persistent requests (the preload's MPI_*_init, MPI_Start, MPI_Startall); init
 * takes valid arguments on a clampi communicator (BSEND_MPI: a buffered send on any, as
 * clampi_msg_bsend_mpi). */
enum {
    CLAMPI_PERSIST_SEND,
    CLAMPI_PERSIST_SSEND,
    CLAMPI_PERSIST_BSEND,
    CLAMPI_PERSIST_RSEND,
    CLAMPI_PERSIST_RECV,
    CLAMPI_PERSIST_BSEND_MPI
};
int clampi_msg_persist_init(int kind, const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                            MPI_Request *request);
int clampi_msg_start(MPI_Request *request);
int clampi_msg_startall(int count, MPI_Request requests[]);

/* Arguments clampi's queue can take (1), checked without raising: the rest is MPI's to judge
 * (MPI_PROC_NULL as a peer, bad input). */
int clampi_msg_ok_bottom(MPI_Datatype type); /* a NULL buffer of count > 0 elements */
static inline int clampi_msg_ok_buf(const void *buf, int count, MPI_Datatype type) {
    if (count < 0 || type == MPI_DATATYPE_NULL) return 0;
    return buf || count == 0 || clampi_msg_ok_bottom(type);
}
static inline int clampi_msg_ok_send(const clampi_mcomm *mc, int dest, int tag) {
    return dest >= 0 && dest < mc->size && tag >= 0 && tag <= mc->tag_ub;
}
static inline int clampi_msg_ok_recv(const clampi_mcomm *mc, int source, int tag) {
    return (source == MPI_ANY_SOURCE || (source >= 0 && source < mc->size)) &&
           (tag == MPI_ANY_TAG || (tag >= 0 && tag <= mc->tag_ub));
}

/* Before a blocking MPI call clampi cannot make nonblocking (communicator creation, the set-up
 * and MPI parts of clampi's own collectives): every receive in clampi's queues goes to MPI's
 * own queue in posting order (as at MPI_Comm_free), so MPI progresses a peer's large send to
 * it inside that call. Messages clampi took stay clampi's. */
void clampi_carrier_release(void);

void clampi_carrier_progress(void); /* pull arrivals for clampi's posted receives; test in-flight ones */
/* MPI's own send or receive on comm (request NULL: the blocking form), made so that it does
 * not block inside MPI while clampi holds receives on the MPI carrier: then its nonblocking
 * form, tested while clampi takes messages (a peer's large send to one of clampi's receives
 * completes only when this process takes it; plain MPI would progress it inside the call). */
enum { CLAMPI_SEND_STANDARD, CLAMPI_SEND_SYNC, CLAMPI_SEND_READY };
int clampi_msg_mpi_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, int mode,
                        MPI_Request *request);
int clampi_msg_mpi_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Request *request, MPI_Status *status);

/* The MPI carrier's counts, read by every completion call (inline: no call on that path).
 * pending: posted receives in clampi's queues and matched ones in flight, over all
 * communicators; while > 0 no blocking MPI call may be made on the program's behalf (a
 * peer's large send needs this process to pull its message). */
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

/* The job's carrier is MPI: CLAMPI_MATCH_CARRIER=mpi in the environment, or auto (the
 * default) in a job whose matching the preload turned on (CLAMPI_MATCH set) with persistent
 * handles. The job's collectives (clampi's own and the preload's wrapped ones) then run in
 * their nonblocking form, the same choice on every rank. */
int clampi_carrier_job(void);
/* The one rule for a carrier choice (0 ucx, 1 mpi, 2 auto: CLAMPI_OPT_MATCH_CARRIER's values):
 * 1 when MPI carries. Without UCX MPI always does; auto asks auto_is_mpi, only then (the
 * job's answer is settled at its first use). */
static inline int clampi_carrier_choice_is_mpi(unsigned long long choice, int (*auto_is_mpi)(void)) {
    return choice == 1 || !CLAMPI_HAVE_UCX || (choice == 2 && auto_is_mpi());
}
/* The preload, before it enables MPI_COMM_WORLD from CLAMPI_MATCH: auto means the MPI
 * carrier. Without the preload's collective wrappers a blocking collective could wait
 * behind a peer's large send to a receive in clampi's queue, so a program linked to
 * libclampi keeps the UCX carrier under auto. */
void clampi_carrier_auto_preload(void);
int clampi_carrier_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm);
int clampi_carrier_dup(MPI_Comm comm, MPI_Comm *out);
/* MPI_Barrier on an intracommunicator mc the MPI carrier holds (every process alike). */
int clampi_carrier_barrier_msgs(clampi_mcomm *mc);
/* Completes the MPI request q by testing, taking messages for clampi's receives meanwhile. */
int clampi_carrier_spin(MPI_Request *q, MPI_Status *status);

/* errors: raise code through comm's handler (MPI_COMM_WORLD's for MPI_COMM_NULL). */
int clampi_msg_raise(MPI_Comm comm, int code, const char *why);
/* MPI_ERR_IN_STATUS of a multiple completion whose first failed status has status_code. */
int clampi_msg_raise_in_status(MPI_Comm comm, int status_code, const char *why);

void clampi_msg_progress(void); /* UCX progress + MPI completion of finished requests */
/* pair.c: MPI_Isendrecv(_replace): the program's request for a receive and a send already
 * started on comm (clampi's or MPI's requests); tmp (or NULL) is freed with it. */
int clampi_msg_pair(MPI_Comm comm, MPI_Request recv, MPI_Request send, void *tmp, MPI_Request *request);
extern _Atomic int clampi_msg_watches_n;
void clampi_msg_watches_poll(void); /* watch.c, from clampi_msg_progress */

#endif
