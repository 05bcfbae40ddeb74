/* clampi collectives: the interface the src/coll sources share (other layers: coll/coll.h).
 * Not installed. */
#ifndef CLAMPI_COLL_INTERNAL_H
#define CLAMPI_COLL_INTERNAL_H

#include <clampi/coll.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "coll/engine/arena.h"
#include "coll/engine/morton.h"
#include "services/heap.h"
#include "services/shared_segments.h"
#include "common/progress_hook.h"
#include "common/wait.h"

/* ---- options: read once through the options table (options.c, common/options.h) -- */
typedef struct clampi_coll_options {
    int coll;                 /* CLAMPI_COLL=on|off: shared-heap collectives (default on) */
    size_t staged_max;        /* CLAMPI_COLL_STAGED_MAX: largest block staged through scratch */
    size_t direct_max;        /* CLAMPI_COLL_DIRECT_MAX: largest block on the direct path */
    int spin;                 /* CLAMPI_COLL_SPIN: busy polls between yields in waits */
    int spin_oversub;         /* CLAMPI_COLL_SPIN_OVERSUB: the same when oversubscribed (0) */
    size_t eager_max;         /* CLAMPI_COLL_EAGER_MAX: largest block on the one-synchronization
                                 (mailbox) path of CMPI_* calls; 0 switches it off */
    int hier;                 /* CLAMPI_COLL_HIER=on|off: hierarchical path for communicators
                                 spanning nodes (default on) */
    size_t hier_alltoall_max; /* CLAMPI_COLL_HIER_ALLTOALL_MAX: largest Alltoall block on the
                                 hierarchical path */
    CMPIX_Coll_algo algo;     /* CLAMPI_COLL_ALGO=morton|naive|mpi: what AUTO means (morton) */
} clampi_coll_options;
#define CLAMPI_COLL_EAGER_MAX_DEFAULT ((size_t)1024)
const clampi_coll_options *clampi_coll_options_get(void);

/* ---- per-communicator state (comm.c) --------------------------------------------- */
enum { CLAMPI_COLL_LINE = 64 };

/* One rank's announcement at the start of a shared-path collective. */
typedef struct clampi_coll_slot {
    uint32_t flags;   /* CLAMPI_SLOT_* */
    int32_t send_seg; /* heap segment of the send data, if SEND_HEAP */
    uint64_t send_off;
    int32_t recv_seg;
    int32_t pad0;
    uint64_t recv_off;
    uint64_t bytes; /* bytes per block */
    uint64_t seq;   /* call number this announcement belongs to; stored last (release) */
    uint64_t pad[2];
} clampi_coll_slot;
_Static_assert(sizeof(clampi_coll_slot) == CLAMPI_COLL_LINE, "slot is one cache line");

enum {
    CLAMPI_SLOT_DELEGATE = 1u << 0,    /* this rank cannot use the shared path */
    CLAMPI_SLOT_SEND_HEAP = 1u << 1,   /* send data readable in the heap */
    CLAMPI_SLOT_RECV_HEAP = 1u << 2,   /* receive buffer writable in the heap */
    CLAMPI_SLOT_SEND_STAGED = 1u << 3, /* send data already copied into scratch */
    CLAMPI_SLOT_IN_PLACE = 1u << 4,
};

/* Shared control block of one communicator (rank 0's segment of the control window). */
typedef struct clampi_coll_ctl {
    uint64_t arrive; /* barrier: arrivals in this round */
    char pad0[CLAMPI_COLL_LINE - 8];
    uint64_t generation; /* barrier: completed rounds */
    char pad1[CLAMPI_COLL_LINE - 8];
    clampi_coll_slot slots[]; /* [2][size] slots, double-buffered by call parity,
                                            then [size] "done" lines (clampi_coll_done) */
} clampi_coll_ctl;

/* One rank's completion flag: the last call whose copies it has finished. */
typedef struct clampi_coll_done {
    uint64_t seq;
    char pad[CLAMPI_COLL_LINE - 8];
} clampi_coll_done;

typedef struct clampi_coll_comm {
    int intranode; /* the communicator lies within one node (and is an intracomm) */
    int size, rank;
    MPI_Comm comm;                  /* the communicator this state belongs to (the abandonment check's) */
    MPI_Comm shm;                   /* node communicator = comm's processes (if intranode) */
    clampi_shared_segments ctl_seg; /* rank 0's: the control block */
    clampi_coll_ctl *ctl;
    uint64_t gen;                   /* barrier rounds this rank has completed */
    uint64_t calls;                 /* shared-path calls so far (slot sequence numbers, parity) */
    clampi_coll_done *done;         /* [size] completion flags in the control block */
    int oversubscribed;             /* more processes in comm than CPUs: yield while waiting */
    clampi_coll_cell *morton;       /* this rank's segment of the Morton schedule (size cells) */
    clampi_coll_cell *naive;        /* this rank's row */
    clampi_shared_segments scr_seg; /* staging scratch: each rank owns scr_bytes */
    size_t scr_bytes;
    char **scr_base; /* [size]: each rank's scratch in this process */
    /* mailbox path (mailbox.c): each rank owns 2 x size cells of cell_bytes */
    clampi_shared_segments mbox_seg;
    size_t cell_bytes; /* bytes per cell (whole cache lines) */
    size_t cell_max;   /* largest block a cell holds; 0: no mailbox path */
    char **mbox;       /* [size]: each rank's cells in this process */
    /* exit waits: the ranks whose schedule segment writes this rank's receive buffer or
     * reads its send data (only they can still be using them) */
    int *wait_morton, nwait_morton;
    int *wait_naive, nwait_naive;
    struct clampi_coll_hier *hier; /* communicator spanning nodes: hierarchical state */
} clampi_coll_comm;

/* State of comm, created at the first call (collective over comm). NULL + *err on
 * failure. */
clampi_coll_comm *clampi_coll_comm_get(MPI_Comm comm, int *err);
/* Node barrier over the control block (counter scheme, acquire/release). Returns
 * MPI_SUCCESS, or the abandonment check's error (clampi_coll_relax): then the state is
 * left mid-call, as it is by every wait below that returns an error. */
int clampi_coll_barrier(clampi_coll_comm *st);
/* Writes slot d's fields from mine, then seq (release): the announcement of call seq. */
void clampi_coll_slot_publish(clampi_coll_slot *d, const clampi_coll_slot *mine, uint64_t seq);
/* Publishes this rank's slot for call seq (fields first, then seq with release). */
void clampi_coll_publish(clampi_coll_comm *st, clampi_coll_slot *slots, const clampi_coll_slot *mine, uint64_t seq);
/* Waits until every rank has published its slot for call seq (acquire). */
int clampi_coll_wait_slots(clampi_coll_comm *st, const clampi_coll_slot *slots, uint64_t seq);
/* Marks this rank's copies of call seq done and waits for those of the nwait ranks in
 * wait (the ranks that touch this rank's buffers). */
int clampi_coll_done_wait(clampi_coll_comm *st, uint64_t seq, const int *wait, int nwait);
/* Waits until *flag >= want (acquire): common/wait.h's policy with budget
 * CLAMPI_COLL_SPIN[_OVERSUB], checking comm now and then (clampi_coll_relax; MPI_COMM_NULL:
 * never). MPI_SUCCESS, or the check's error. */
int clampi_coll_wait_flag(const uint64_t *flag, uint64_t want, int oversubscribed, MPI_Comm comm);
/* The same with the communicator's oversubscription and communicator. */
int clampi_coll_wait_geq(const clampi_coll_comm *st, const uint64_t *flag, uint64_t want);
/* For wait loops that check several flags (as clampi_coll_wait_flag does for one): the
 * polls between two yields (common/wait.h), read once per wait, and one round. */
unsigned clampi_coll_spin_budget(int oversubscribed);
/* The abandonment check (coll.h's clampi_coll_set_abandon_check) on comm at every 64th
 * yield of a wait: MPI_SUCCESS or the error that ends the wait. */
int clampi_coll_abandoned(MPI_Comm comm, unsigned yields);
/* Whether a check is set; the check at once (MPI_SUCCESS where none is set); and the
 * revoke hook on an inner communicator (nothing where none is set). */
int clampi_coll_abandon_check_set(void);
int clampi_coll_abandon_check_now(MPI_Comm comm);
void clampi_coll_abandon_revoke(MPI_Comm inner);
static inline int clampi_coll_relax(unsigned *polls, unsigned budget, MPI_Comm comm) {
    if (!clampi_wait_pause(polls, budget)) {
        clampi_cpu_relax();
        return MPI_SUCCESS;
    }
    clampi_idle(); /* the message layer takes messages meanwhile (the MPI carrier) */
    return clampi_coll_abandoned(comm, budget > 1 ? *polls / budget : *polls);
}
/* Makes each rank's scratch at least bytes (collective over comm; consistent sizes). */
int clampi_coll_scratch_ensure(clampi_coll_comm *st, size_t bytes);

/* ---- collectives (collectives.c) ------------------------------------------------- */
/* Contiguity of a datatype for the shared path: 1 if count elements are size*count
 * contiguous bytes starting at the buffer address. */
int clampi_coll_type_contiguous(MPI_Datatype t);

/* ---- mailbox path (mailbox.c): small blocks, one synchronization per call --------- */
/* Creates the cells (collective over st->shm; nothing when CLAMPI_COLL_EAGER_MAX=0). */
int clampi_coll_mailbox_create(clampi_coll_comm *st);
/* One call on the mailbox path (every rank of the communicator takes it for the same
 * block size B <= st->cell_max): *handled = 0 when some rank had to delegate (all agree);
 * MPI_ERR_TRUNCATE on every rank when the block sizes differ. */
int clampi_coll_mailbox_run(clampi_coll_comm *st, int alltoall, const char *my_send, char *recvbuf, size_t B,
                            int in_place, int delegate, int *handled);
/* Bad input across paths: ranks passing different block sizes may split between the
 * mailbox path (B <= cell_max) and the slot path. A slot-path rank waits for every slot of
 * call seq with this instead of clampi_coll_wait_slots: it returns MPI_ERR_TRUNCATE when
 * some rank is on the mailbox path in this call (its tag for us carries seq; it will never
 * publish a slot), after writing our own tags for seq with our size, so that the mailbox
 * ranks see the mismatch too. Then every rank returns MPI_ERR_TRUNCATE and nobody hangs.
 * Else MPI_SUCCESS, or the abandonment check's error. */
int clampi_coll_wait_slots_or_mailbox(clampi_coll_comm *st, const clampi_coll_slot *slots, uint64_t seq, int alltoall,
                                      size_t B);

/* ---- communicators spanning nodes (hier.c) --------------------------------------- */
/* Hierarchical state of comm (an intracommunicator spanning nodes; node = comm's node
 * split): NULL if it cannot be built (then the MPI library serves comm). Collective. */
struct clampi_coll_hier *clampi_coll_hier_create(MPI_Comm comm, MPI_Comm node, int *err);
void clampi_coll_hier_free(struct clampi_coll_hier *h);
/* Hierarchical Alltoall (kind 0) / Allgather (kind 1) of B-byte blocks of contiguous
 * data: on-node Morton copies through the shared heap, an exchange among node leaders
 * with the MPI library's collective. *handled = 0 (the same on every rank): nothing done,
 * call the MPI library. */
int clampi_coll_hier_run(struct clampi_coll_hier *h, int kind, const void *sendbuf, void *recvbuf, size_t B,
                         int *handled);
/* 1 when the last call's error came from the abandonment check (coll.h): a revoked
 * communicator or a failed process, seen in an on-node wait or after the leaders' exchange. */
int clampi_coll_hier_abandoned(const struct clampi_coll_hier *h);

/* Path counters (collectives.c). */
extern CMPIX_Coll_stats clampi_coll_stats;

#endif
