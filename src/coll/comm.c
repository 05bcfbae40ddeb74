/* Per-communicator state of the shared-path collectives, cached as an attribute on the
 * communicator (freed with it): the node check, a control window with the barrier and
 * the announcement slots, this rank's schedules and the staging scratch window. */
#include "coll/coll_internal.h"
#include "services/finalize.h"
#include "topo/node.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int comm_keyval = MPI_KEYVAL_INVALID;

static void scratch_free(clampi_coll_comm *st) {
    clampi_shared_segments_free(&st->scr_seg);
    st->scr_base = NULL;
    st->scr_bytes = 0;
}

static void state_free(clampi_coll_comm *st) {
    if (st == NULL) return;
    if (st->intranode) {
        scratch_free(st);
        clampi_shared_segments_free(&st->mbox_seg);
        clampi_shared_segments_free(&st->ctl_seg);
        MPI_Comm_free(&st->shm);
    }
    clampi_coll_hier_free(st->hier);
    free(st->morton);
    free(st->naive);
    free(st->wait_morton);
    free(st->wait_naive);
    free(st);
}

/* The ranks (other than me) whose segment of a schedule touches row me (writes my receive
 * buffer) or column me (reads my send data): the exit of a call waits only for them. */
static int *exit_wait_set(uint32_t P, uint32_t me, int (*segment)(uint32_t, uint32_t, clampi_coll_cell *), int *n) {
    int *set = malloc(sizeof(int) * P);
    clampi_coll_cell *cells = malloc(sizeof *cells * P);
    *n = 0;
    if (set == NULL || cells == NULL) {
        free(set);
        free(cells);
        return NULL;
    }
    for (uint32_t k = 0; k < P; k++) {
        if (k == me) continue;
        segment(P, k, cells);
        for (uint32_t i = 0; i < P; i++)
            if (cells[i].r == me || cells[i].c == me) {
                set[(*n)++] = (int)k;
                break;
            }
    }
    free(cells);
    return set;
}

/* one-entry lookup cache: the last communicator used by this thread */
static __thread MPI_Comm last_comm = MPI_COMM_NULL;
static __thread clampi_coll_comm *last_st;

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
    if (last_st == attr) {
        last_comm = MPI_COMM_NULL;
        last_st = NULL;
    }
    state_free(attr);
    return MPI_SUCCESS;
}

/* A step of MPI_Finalize (services/finalize.h): MPI_COMM_WORLD's state goes while MPI
 * still works. */
static void world_teardown(void) {
    /* only if a collective ran on MPI_COMM_WORLD itself: Open MPI raises an error for
     * deleting an attribute that is not there */
    void *st;
    int found = 0;
    if (comm_keyval != MPI_KEYVAL_INVALID) MPI_Comm_get_attr(MPI_COMM_WORLD, comm_keyval, &st, &found);
    if (found) MPI_Comm_delete_attr(MPI_COMM_WORLD, comm_keyval);
}

static clampi_coll_comm *state_create(MPI_Comm comm, int *err) {
    clampi_coll_comm *st = calloc(1, sizeof *st);
    if (st == NULL) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    st->shm = MPI_COMM_NULL;
    st->comm = comm;
    MPI_Comm_size(comm, &st->size);
    MPI_Comm_rank(comm, &st->rank);
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter) return st; /* intercommunicators: always the MPI library */
    MPI_Comm node;
    *err = clampi_node_split(comm, &node);
    if (*err != MPI_SUCCESS) {
        free(st);
        return NULL;
    }
    int nsize;
    MPI_Comm_size(node, &nsize);
    int spans = 0, one = nsize != st->size;
    MPI_Allreduce(&one, &spans, 1, MPI_INT, MPI_MAX, comm);
    if (spans) { /* spans nodes: the hierarchical path if it can be built, else MPI */
        st->hier = clampi_coll_options_get()->hier ? clampi_coll_hier_create(comm, node, err) : NULL;
        MPI_Comm_free(&node);
        *err = MPI_SUCCESS;
        return st;
    }
    st->intranode = 1;
    st->shm = node; /* same processes, same rank order (key 0 keeps comm order) */
    MPI_Aint bytes = st->rank == 0
                         ? (MPI_Aint)(sizeof(clampi_coll_ctl) + 2 * (size_t)st->size * sizeof(clampi_coll_slot) +
                                      (size_t)st->size * sizeof(clampi_coll_done))
                         : 0;
    if (clampi_shared_segments_allocate(st->shm, (size_t)bytes, &st->ctl_seg) != MPI_SUCCESS) {
        /* no shared memory here: MPI serves comm */
        MPI_Comm_free(&st->shm);
        st->shm = MPI_COMM_NULL;
        st->intranode = 0;
        *err = MPI_SUCCESS;
        return st;
    }
    st->ctl = (clampi_coll_ctl *)st->ctl_seg.base[0]; /* zero-filled */
    st->done = (clampi_coll_done *)&st->ctl->slots[2 * (size_t)st->size];
    st->oversubscribed = clampi_node_oversubscribed(st->size);
    st->morton = malloc((size_t)st->size * sizeof *st->morton);
    st->naive = malloc((size_t)st->size * sizeof *st->naive);
    if (!st->morton || !st->naive) {
        state_free(st);
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    clampi_coll_morton_segment((uint32_t)st->size, (uint32_t)st->rank, st->morton);
    clampi_coll_naive_segment((uint32_t)st->size, (uint32_t)st->rank, st->naive);
    st->wait_morton =
        exit_wait_set((uint32_t)st->size, (uint32_t)st->rank, clampi_coll_morton_segment, &st->nwait_morton);
    st->wait_naive = exit_wait_set((uint32_t)st->size, (uint32_t)st->rank, clampi_coll_naive_segment, &st->nwait_naive);
    *err = st->wait_morton && st->wait_naive ? clampi_coll_mailbox_create(st) : MPI_ERR_NO_MEM;
    if (*err != MPI_SUCCESS) {
        state_free(st);
        return NULL;
    }
    MPI_Barrier(st->shm); /* rank 0 has zeroed the control block */
    return st;
}

clampi_coll_comm *clampi_coll_comm_get(MPI_Comm comm, int *err) {
    *err = MPI_SUCCESS;
    if (comm == last_comm && last_st != NULL) return last_st;
    if (comm_keyval == MPI_KEYVAL_INVALID) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &comm_keyval, NULL);
        clampi_finalize_at(CLAMPI_FINALIZE_COLL, world_teardown);
    }
    void *attr;
    int found = 0;
    MPI_Comm_get_attr(comm, comm_keyval, &attr, &found);
    clampi_coll_comm *st = found ? attr : state_create(comm, err);
    if (st != NULL && !found) MPI_Comm_set_attr(comm, comm_keyval, st);
    if (st != NULL) {
        last_comm = comm;
        last_st = st;
    }
    return st;
}

unsigned clampi_coll_spin_budget(int oversubscribed) {
    const clampi_coll_options *o = clampi_coll_options_get();
    return (unsigned)(oversubscribed ? o->spin_oversub : o->spin);
}

static clampi_coll_abandon_fn abandon_check;
static clampi_coll_revoke_fn abandon_revoke;

void clampi_coll_set_abandon_check(clampi_coll_abandon_fn check, clampi_coll_revoke_fn revoke) {
    __atomic_store_n(&abandon_revoke, revoke, __ATOMIC_RELEASE);
    __atomic_store_n(&abandon_check, check, __ATOMIC_RELEASE);
}

int clampi_coll_abandon_check_set(void) { return __atomic_load_n(&abandon_check, __ATOMIC_ACQUIRE) != NULL; }

int clampi_coll_abandon_check_now(MPI_Comm comm) {
    clampi_coll_abandon_fn fn = __atomic_load_n(&abandon_check, __ATOMIC_ACQUIRE);
    return fn && comm != MPI_COMM_NULL ? fn(comm) : MPI_SUCCESS;
}

int clampi_coll_abandoned(MPI_Comm comm, unsigned yields) {
    return yields % 64 != 0 ? MPI_SUCCESS : clampi_coll_abandon_check_now(comm);
}

void clampi_coll_abandon_revoke(MPI_Comm inner) {
    clampi_coll_revoke_fn fn = __atomic_load_n(&abandon_revoke, __ATOMIC_ACQUIRE);
    if (fn && inner != MPI_COMM_NULL) fn(inner);
}

int clampi_coll_wait_flag(const uint64_t *flag, uint64_t want, int oversubscribed, MPI_Comm comm) {
    const unsigned budget = clampi_coll_spin_budget(oversubscribed);
    int err = MPI_SUCCESS;
    for (unsigned polls = 0; err == MPI_SUCCESS && __atomic_load_n(flag, __ATOMIC_ACQUIRE) < want;)
        err = clampi_coll_relax(&polls, budget, comm);
    return err;
}

int clampi_coll_wait_geq(const clampi_coll_comm *st, const uint64_t *flag, uint64_t want) {
    return clampi_coll_wait_flag(flag, want, st->oversubscribed, st->comm);
}

void clampi_coll_publish(clampi_coll_comm *st, clampi_coll_slot *slots, const clampi_coll_slot *mine, uint64_t seq) {
    clampi_coll_slot_publish(&slots[st->rank], mine, seq);
}

void clampi_coll_slot_publish(clampi_coll_slot *d, const clampi_coll_slot *mine, uint64_t seq) {
    d->flags = mine->flags;
    d->send_seg = mine->send_seg;
    d->send_off = mine->send_off;
    d->recv_seg = mine->recv_seg;
    d->recv_off = mine->recv_off;
    d->bytes = mine->bytes;
    __atomic_store_n(&d->seq, seq, __ATOMIC_RELEASE);
}

int clampi_coll_wait_slots(clampi_coll_comm *st, const clampi_coll_slot *slots, uint64_t seq) {
    int err = MPI_SUCCESS;
    for (int i = 0; i < st->size && err == MPI_SUCCESS; i++)
        err = clampi_coll_wait_geq(st, &slots[i].seq, seq); /* a slot holds seq or seq - 2 */
    return err;
}

int clampi_coll_done_wait(clampi_coll_comm *st, uint64_t seq, const int *wait, int nwait) {
    __atomic_store_n(&st->done[st->rank].seq, seq, __ATOMIC_RELEASE);
    int err = MPI_SUCCESS;
    for (int i = 0; i < nwait && err == MPI_SUCCESS; i++) err = clampi_coll_wait_geq(st, &st->done[wait[i]].seq, seq);
    return err;
}

int clampi_coll_barrier(clampi_coll_comm *st) {
    clampi_coll_ctl *ctl = st->ctl;
    uint64_t g = st->gen++;
    if (__atomic_add_fetch(&ctl->arrive, 1, __ATOMIC_ACQ_REL) == (uint64_t)st->size) {
        __atomic_store_n(&ctl->arrive, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&ctl->generation, g + 1, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    return clampi_coll_wait_geq(st, &ctl->generation, g + 1);
}

int clampi_coll_scratch_ensure(clampi_coll_comm *st, size_t bytes) {
    if (st->scr_base != NULL && st->scr_bytes >= bytes) return MPI_SUCCESS;
    size_t want = st->scr_bytes * 2 > bytes ? st->scr_bytes * 2 : bytes;
    want = want < 4096 ? 4096 : (want + 4095) & ~(size_t)4095;
    scratch_free(st);
    int err = clampi_shared_segments_allocate(st->shm, want, &st->scr_seg);
    if (err != MPI_SUCCESS) return err;
    st->scr_base = st->scr_seg.base;
    st->scr_bytes = want;
    return MPI_SUCCESS;
}
