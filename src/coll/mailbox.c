/* The mailbox path of the collectives: small blocks with one synchronization per call.
 *
 * Each rank owns, per call parity, one cell per destination (Alltoall; Allgather uses
 * cell 0 for everyone). A cell is a fixed number of cache lines ending in a 16-byte tag
 * (flags, block size, call number); the block lies right before the tag, so a block of
 * up to 48 bytes shares the tag's cache line. A call: write my blocks into my cells and
 * release-store each tag's call number; wait (acquire) until every peer's cell for me
 * carries this call number; copy the blocks into my own receive buffer; return.
 *
 * Nobody writes into another rank's buffers and nobody reads them, so a rank may return
 * as soon as its own copies are done: the exit of call e is folded into the entry of call
 * e + 2, when its cells of this parity are written again. By then every reader has
 * finished call e, since it had published call e + 1 (all of this communicator's
 * shared-path calls wait for every peer's entry, on this path through the cells, on the
 * others through the slots). A rank whose datatype is not contiguous still writes its
 * tags (flag DELEGATE, no data): every rank sees every sender's tag, so all agree to
 * hand the call to the MPI library. */
#include "coll/coll_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct cell_tag {
    uint32_t flags; /* CLAMPI_SLOT_DELEGATE */
    uint32_t bytes; /* block size (mismatch check) */
    uint64_t seq;   /* call number, stored last (release) */
} cell_tag;
enum { TAG = sizeof(cell_tag) };

int clampi_coll_mailbox_create(clampi_coll_comm *st) {
    size_t eager = clampi_coll_options_get()->eager_max;
    if (eager == 0 || st->size < 2) return MPI_SUCCESS;
    size_t cell = (eager + TAG + CLAMPI_COLL_LINE - 1) & ~(size_t)(CLAMPI_COLL_LINE - 1);
    size_t cap = (((size_t)4 << 20) / (size_t)st->size) & ~(size_t)(CLAMPI_COLL_LINE - 1);
    if (cell > cap) /* at most 4 MiB of cells per rank and parity */
        cell = cap > CLAMPI_COLL_LINE ? cap : CLAMPI_COLL_LINE;
    int err = clampi_shared_segments_allocate(st->shm, 2 * (size_t)st->size * cell, &st->mbox_seg);
    if (err != MPI_SUCCESS) return err;
    st->mbox = st->mbox_seg.base; /* page-aligned: whole lines */
    st->cell_bytes = cell;
    st->cell_max = cell - TAG;
    return MPI_SUCCESS;
}

static inline cell_tag *tag_of(const clampi_coll_comm *st, int owner, uint64_t seq, int dest) {
    size_t idx = (size_t)(seq & 1) * (size_t)st->size + (size_t)dest;
    return (cell_tag *)(st->mbox[owner] + (idx + 1) * st->cell_bytes - TAG);
}

int clampi_coll_mailbox_run(clampi_coll_comm *st, int alltoall, const char *my_send, char *recv, size_t B, int in_place,
                            int delegate, int *handled) {
    const int P = st->size, me = st->rank;
    const uint64_t seq = ++st->calls;
    for (int k = 1, d0 = me + 1; k < P; k++, d0++) { /* my cells: one per destination (Alltoall) or one */
        if (d0 == P) d0 = 0;
        int d = alltoall ? d0 : 0;
        cell_tag *t = tag_of(st, me, seq, d);
        if (!delegate) memcpy((char *)t - B, my_send + (alltoall ? (size_t)d * B : 0), B);
        t->flags = delegate ? CLAMPI_SLOT_DELEGATE : 0;
        t->bytes = (uint32_t)B;
        __atomic_store_n(&t->seq, seq, __ATOMIC_RELEASE);
        if (!alltoall) break;
    }
    int any_delegate = delegate, mismatch = 0, err = MPI_SUCCESS;
    for (int k = 1, j = me + 1; k < P && err == MPI_SUCCESS; k++, j++) {
        if (j == P) j = 0;
        const cell_tag *t = tag_of(st, j, seq, alltoall ? me : 0);
        err = clampi_coll_wait_geq(st, &t->seq, seq);
        any_delegate |= (t->flags & CLAMPI_SLOT_DELEGATE) != 0;
        mismatch |= t->bytes != (uint32_t)B;
    }
    *handled = 1;
    if (err != MPI_SUCCESS) return err; /* abandoned (revoked, a process failed) */
    /* A mismatch wins over delegation: a peer on the slot path (its tags carry its larger
     * size) returns the error too, so nobody may hand the call to the MPI library. */
    if (mismatch) return MPI_ERR_TRUNCATE; /* every rank sees it: nobody hangs */
    if (any_delegate) {
        *handled = 0;
        return MPI_SUCCESS; /* every rank saw the same tags: all delegate */
    }
    for (int k = 1, j = me + 1; k < P; k++, j++) {
        if (j == P) j = 0;
        memcpy(recv + (size_t)j * B, (const char *)tag_of(st, j, seq, alltoall ? me : 0) - B, B);
    }
    if (!in_place) memcpy(recv + (size_t)me * B, my_send + (alltoall ? (size_t)me * B : 0), B);
    return MPI_SUCCESS;
}

/* Our tags for call seq, no data: the mailbox ranks of a mismatched call see our size.
 * (The same cell walk as clampi_coll_mailbox_run's, kept apart on purpose: folding both
 * into one inline helper cost 20 % on 64-256 B blocks back to back, measured.) */
static void post_size_only(clampi_coll_comm *st, int alltoall, size_t B, uint64_t seq) {
    const uint32_t bytes = B > UINT32_MAX ? UINT32_MAX : (uint32_t)B; /* > cell_max either way */
    for (int d = 0; d < st->size; d++) {
        if (d == st->rank && alltoall) continue;
        cell_tag *t = tag_of(st, st->rank, seq, alltoall ? d : 0);
        t->flags = 0;
        t->bytes = bytes;
        __atomic_store_n(&t->seq, seq, __ATOMIC_RELEASE);
        if (!alltoall) break;
    }
}

static int on_mailbox(const clampi_coll_comm *st, int peer, int alltoall, uint64_t seq) {
    const cell_tag *t = tag_of(st, peer, seq, alltoall ? st->rank : 0);
    return __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE) >= seq;
}

int clampi_coll_wait_slots_or_mailbox(clampi_coll_comm *st, const clampi_coll_slot *slots, uint64_t seq, int alltoall,
                                      size_t B) {
    if (st->mbox == NULL) return clampi_coll_wait_slots(st, slots, seq);
    const unsigned budget = clampi_coll_spin_budget(st->oversubscribed);
    int mixed = 0, err = MPI_SUCCESS;
    for (int i = 0; i < st->size && err == MPI_SUCCESS; i++) {
        if (i == st->rank) continue;
        for (unsigned polls = 0; err == MPI_SUCCESS && __atomic_load_n(&slots[i].seq, __ATOMIC_ACQUIRE) < seq;) {
            if (on_mailbox(st, i, alltoall, seq)) {
                mixed = 1;
                break;
            }
            err = clampi_coll_relax(&polls, budget, st->comm);
        }
    }
    if (err != MPI_SUCCESS) return err;
    if (mixed) post_size_only(st, alltoall, B, seq);
    return mixed ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}
