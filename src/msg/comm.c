/* CMPIX_Comm_enable / CMPIX_Comm_disable and the communicator lookups. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clampi/match.h"
#include "common/errors.h"
#include "common/options.h"
#include "common/xorshift.h"
#include "msg/msg_internal.h"

/* context id -> communicator, read by the AM handler without a lock */
static _Atomic(clampi_mcomm *) by_context[CLAMPI_MSG_MAX_CONTEXTS];
static _Atomic uint32_t context_used[CLAMPI_MSG_MAX_CONTEXTS / 32]; /* by_context's non-NULL */

/* Taken where a communicator enters or leaves by_context and where its program's handle
 * goes, so that clampi_msg_comm_visit sees each one whole (the AM handler needs no lock). */
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;

static void context_set(uint32_t i, clampi_mcomm *mc) {
    pthread_mutex_lock(&contexts_lock);
    atomic_store(&by_context[i], mc);
    if (mc)
        atomic_fetch_or(&context_used[i / 32], 1u << (i % 32));
    else
        atomic_fetch_and(&context_used[i / 32], ~(1u << (i % 32)));
    pthread_mutex_unlock(&contexts_lock);
}

int clampi_msg_comm_visit(void (*fn)(clampi_mcomm *mc, MPI_Comm comm)) {
    if (pthread_mutex_trylock(&contexts_lock) != 0) return 0;
    for (uint32_t w = 0; w < CLAMPI_MSG_MAX_CONTEXTS / 32; w++)
        for (uint32_t bits = atomic_load(&context_used[w]); bits; bits &= bits - 1) {
            clampi_mcomm *mc = atomic_load(&by_context[w * 32 + (uint32_t)__builtin_ctz(bits)]);
            if (mc && mc->comm != MPI_COMM_NULL) fn(mc, mc->comm);
        }
    pthread_mutex_unlock(&contexts_lock);
    return 1;
}

void clampi_msg_comm_drop_handle(clampi_mcomm *mc) {
    pthread_mutex_lock(&contexts_lock);
    mc->comm = MPI_COMM_NULL;
    pthread_mutex_unlock(&contexts_lock);
}
static pthread_mutex_t enable_lock = PTHREAD_MUTEX_INITIALIZER;
static int keyval = MPI_KEYVAL_INVALID;

/* The last lookup of each thread, valid while no communicator was enabled or disabled
 * since (`generation` changes first): a program's calls mostly name one communicator, and
 * MPI_Comm_get_attr costs hundreds of instructions. A handle freed and reused for a new
 * communicator went through a disable or enable (or was never clampi's, then or now). */
_Atomic unsigned clampi_msg_comm_generation = 1;
_Thread_local CLAMPI_MSG_TLS clampi_msg_comm_cache clampi_msg_comm_last;

static void mcomm_free(clampi_mcomm *mc);
static int enable_finish(MPI_Comm comm, clampi_mcomm *mc, int carrier_err, const clampi_mcomm *parent, int wires);
static int finalizing; /* MPI_Finalize: everything goes now */

/* The attribute goes: CMPIX_Comm_disable, MPI_Comm_free of an enabled communicator without
 * it, or MPI_Finalize (local: forced close).
 * Operations pending at a free complete normally, as MPI's do: retire.c keeps mc. */
static int on_comm_delete(MPI_Comm comm, int kv, void *value, void *extra) {
    clampi_mcomm *mc = value;
    atomic_fetch_add(&clampi_msg_comm_generation, 1);
    if (finalizing) {
        clampi_msg_comm_release(mc, 1);
        return MPI_SUCCESS;
    }
    clampi_msg_retire(mc);
    return MPI_SUCCESS;
}

/* MPI_Finalize with operations on retired mc still pending (they never complete now): its
 * endpoints forced closed and its id given back; its memory stays, as requests name it. */
void clampi_msg_comm_abandon(clampi_mcomm *mc) {
    context_set(mc->context, NULL);
    clampi_msg_ucx_close_forced(mc);
}

void clampi_msg_comm_release(clampi_mcomm *mc, int force) {
    atomic_fetch_add(&clampi_msg_comm_generation, 1);
    context_set(mc->context, NULL);
    if (force) clampi_msg_ucx_close_forced(mc);
    mcomm_free(mc);
}

clampi_mcomm *clampi_msg_comm_lookup(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL || keyval == MPI_KEYVAL_INVALID) return NULL;
    unsigned g = atomic_load_explicit(&clampi_msg_comm_generation, memory_order_acquire);
    if (clampi_msg_comm_last.gen == g && clampi_msg_comm_last.comm == comm) return clampi_msg_comm_last.mc;
    void *v = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &v, &flag) != MPI_SUCCESS || !flag) v = NULL;
    clampi_msg_comm_last.gen = g;
    clampi_msg_comm_last.comm = comm;
    clampi_msg_comm_last.mc = v;
    return v;
}

clampi_mcomm *clampi_msg_comm_by_context(uint32_t ctx) {
    return ctx < CLAMPI_MSG_MAX_CONTEXTS ? atomic_load(&by_context[ctx]) : NULL;
}

int clampi_msg_raise(MPI_Comm comm, int code, const char *why) {
    if (why && clampi_opt_process(CLAMPI_OPT_MATCH_VERBOSE).u) fprintf(stderr, "clampi: %s\n", why);
    return clampi_raise_mpi(comm, code);
}

int clampi_msg_raise_in_status(MPI_Comm comm, int status_code, const char *why) {
    if (why && clampi_opt_process(CLAMPI_OPT_MATCH_VERBOSE).u) fprintf(stderr, "clampi: %s\n", why);
    return clampi_raise_in_status(comm, status_code);
}

static void mcomm_free(clampi_mcomm *mc) {
    /* first: progress lets go of mc (a retired mc was let go at its retirement; taking the
     * carriers' lock again here could be inside MPI's progress under that lock) */
    if (mc->ops && !atomic_load(&mc->retired)) mc->ops->disable(mc);
    if (mc->matcher) {
        clampi_msg_drop_unexpected(mc);
        clampi_matcher_destroy(mc->matcher);
    }
    if (mc->ops) mc->ops->release(mc);
    for (int i = 0; mc->stash && i < mc->size; i++)
        while (mc->stash[i]) {
            clampi_msg *n = mc->stash[i]->next;
            clampi_msg_free(mc->stash[i]);
            mc->stash[i] = n;
        }
    pthread_mutex_destroy(&mc->send_lock);
    pthread_mutex_destroy(&mc->recv_lock);
    pthread_mutex_destroy(&mc->ack_lock);
    free(mc->eps);
    free(mc->world);
    free(mc->seq_out);
    free(mc->seq_in);
    free(mc->stash);
    free(mc);
}

/* The highest communicator serial this process has seen (under enable_lock). A new
 * communicator's serial is one more than the highest over its members, so it exceeds that
 * of every earlier communicator any member belonged to. It is also the epoch its messages
 * carry beside the context id: a message of a freed communicator that arrives after the
 * id was reused (a freed communicator waits for nobody: retire.c) was sent and is received
 * by members of both, so it carries an older epoch and is dropped. */
static int last_serial;
static MPI_Op agree_op = MPI_OP_NULL;

/* The agreement's reduction: OR of the used-id bitmaps and of the flags, MAX of the serials
 * and of the bids. */
#define AGREE_ERR (CLAMPI_MSG_MAX_CONTEXTS / 32)
#define AGREE_BUSY (AGREE_ERR + 1)
#define AGREE_SERIAL (AGREE_BUSY + 1)
#define AGREE_BID (AGREE_SERIAL + 1)
#define AGREE_NOT_SPARE (AGREE_BID + 1) /* a duplicate's parent's wire slots (carrier_ops.h) */
#define AGREE_USED (AGREE_NOT_SPARE + 1)
#define AGREE_UNUSED (AGREE_USED + 1)
#define AGREE_WORDS (AGREE_UNUSED + 1)
static void agree_fn(void *in, void *inout, int *len, MPI_Datatype *type) {
    uint32_t *a = in, *b = inout;
    for (int k = 0; k < *len; k++) {
        int i = k % AGREE_WORDS;
        b[k] = i < AGREE_SERIAL || i >= AGREE_NOT_SPARE ? a[k] | b[k] : a[k] > b[k] ? a[k] : b[k];
    }
}

/* What an agreement does with the parent's spare wires (carrier_ops.h, wire_slots): */
enum {
    WIRES_NONE, /* nothing: not a duplicate, or the carrier keeps none */
    WIRES_TAKE, /* the new communicator takes one spare everywhere (it has no wire yet) */
    WIRES_GIVE  /* its wire, just made, takes a slot free everywhere */
};
#define AGREE_NO_SPARE (-1) /* WIRES_TAKE found none: nothing was registered */

/* Agreements running on this process (under enable_lock). One at a time offers this
 * process's free ids (it holds the "mask"); the others offer none that round and try again,
 * so no lock is held across a reduction: a lock held there deadlocks two threads enabling
 * two communicators in opposite orders on two processes. The mask goes to the running
 * agreement of lowest priority value, fixed after its first round that found the mask held
 * somewhere: its root's random bid, the same on all its processes, so from then on the
 * same agreement wins everywhere (MPICH's context-id allocation works alike, its priority
 * being the parent's context id, which clampi may not have). What neither avoids: while
 * the holder waits for a late process, the others here retry, and a late process that
 * waits for one of them to finish first (a message sent after it) never comes. */
typedef struct agreement {
    uint64_t priority;
    struct agreement *next;
} agreement;
static agreement *running;
static int mask_busy;

static int mask_mine(const agreement *me) {
    if (mask_busy) return 0;
    for (const agreement *a = running; a; a = a->next)
        if (a->priority < me->priority) return 0;
    return 1;
}

static uint32_t bid(void) {
    static _Thread_local uint64_t x;
    if (!x) x = (uint64_t)(uintptr_t)&x ^ (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15u;
    return (uint32_t)(clampi_xorshift64(&x) >> 16);
}

/* On every process of comm: the lowest context id free on all of them, the communicator's
 * serial, and whether enabling failed anywhere (mine: this process's result), in one
 * reduction of AGREE_WORDS words unless another agreement held the mask somewhere; then
 * mc is registered (context table, attribute). */
static int agree_context(MPI_Comm comm, clampi_mcomm *mc, int mine, const clampi_mcomm *parent, int wires) {
    agreement me = {UINT64_MAX, NULL};
    int rc = MPI_SUCCESS, done = 0, root = 0;
    PMPI_Comm_rank(comm, &root);
    root = root == 0;
    pthread_mutex_lock(&enable_lock);
    if (keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_comm_delete, &keyval, NULL);
    if (agree_op == MPI_OP_NULL) PMPI_Op_create(agree_fn, 1, &agree_op);
    me.next = running;
    running = &me;
    pthread_mutex_unlock(&enable_lock);
    while (!done) {
        uint32_t words[AGREE_WORDS] = {0}, all[AGREE_WORDS];
        pthread_mutex_lock(&enable_lock);
        int own = mask_mine(&me);
        mask_busy |= own;
        for (uint32_t w = 0; w < CLAMPI_MSG_MAX_CONTEXTS / 32; w++)
            words[w] = own ? atomic_load(&context_used[w]) : UINT32_MAX;
        words[AGREE_SERIAL] = (uint32_t)last_serial + 1;
        if (wires != WIRES_NONE) {
            uint32_t spare, used;
            int hint;
            parent->ops->wire_slots(parent, &spare, &used, &hint);
            words[AGREE_NOT_SPARE] = ~spare;
            words[AGREE_USED] = used;
            words[AGREE_UNUSED] = ~used;
        }
        pthread_mutex_unlock(&enable_lock);
        words[AGREE_ERR] = mine != MPI_SUCCESS;
        words[AGREE_BUSY] = !own;
        words[AGREE_BID] = root ? bid() : 0; /* the root's alone: a fair draw at any size */
        /* one failing on some processes only leaves the others retrying: a hang, where
         * they went on with a result of their own before retries existed */
        rc = clampi_carrier_allreduce(words, all, AGREE_WORDS, MPI_UINT32_T, agree_op, comm);
        pthread_mutex_lock(&enable_lock);
        if (own) mask_busy = 0;
        if (rc != MPI_SUCCESS) {
            done = 1;
        } else if (all[AGREE_ERR]) {
            rc = mine != MPI_SUCCESS ? mine : MPI_ERR_OTHER;
            done = 1;
        } else if (!all[AGREE_BUSY]) { /* every process offered its free ids */
            rc = MPI_ERR_OTHER;        /* none free everywhere */
            for (uint32_t i = 0; rc != MPI_SUCCESS && i < CLAMPI_MSG_MAX_CONTEXTS; i++)
                if (!(all[i / 32] & (1u << (i % 32)))) {
                    mc->context = i;
                    rc = MPI_SUCCESS;
                }
            if (rc == MPI_SUCCESS && wires == WIRES_TAKE && all[AGREE_NOT_SPARE] == UINT32_MAX)
                rc = AGREE_NO_SPARE; /* none spare everywhere: the wire is made, then agreed on */
            else if (rc == MPI_SUCCESS && wires != WIRES_NONE)
                parent->ops->wire_agreed(parent, mc, ~all[AGREE_NOT_SPARE], ~all[AGREE_USED], all[AGREE_UNUSED],
                                         wires == WIRES_TAKE);
            if (rc == MPI_SUCCESS) {
                mc->serial = (int)all[AGREE_SERIAL];
                if (mc->serial > last_serial) last_serial = mc->serial;
                mc->epoch = (uint32_t)mc->serial & CLAMPI_MSG_EPOCH_MASK;
                context_set(mc->context, mc);
                PMPI_Comm_set_attr(comm, keyval, mc);
                atomic_fetch_add(&clampi_msg_comm_generation, 1);
            }
            done = 1;
        } else if (me.priority == UINT64_MAX) {
            me.priority = all[AGREE_BID];
        }
        if (done) {
            agreement **a = &running;
            while (*a != &me) a = &(*a)->next;
            *a = me.next;
        }
        pthread_mutex_unlock(&enable_lock);
        if (!done) sched_yield(); /* let the mask's holder on this process finish its round */
    }
    return rc;
}

static clampi_mcomm *mcomm_new(MPI_Comm comm, const clampi_match_config *cfg) {
    clampi_mcomm *mc = calloc(1, sizeof *mc);
    if (!mc) return NULL;
    mc->comm = comm;
    mc->cfg = *cfg;
    mc->wire = MPI_COMM_NULL;
    mc->wire_slot = -1;
    PMPI_Comm_rank(comm, &mc->rank);
    PMPI_Comm_size(comm, &mc->size);
    int *ub, flag;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    mc->tag_ub = flag ? *ub : 32767;
    pthread_mutex_init(&mc->send_lock, NULL);
    pthread_mutex_init(&mc->recv_lock, NULL);
    pthread_mutex_init(&mc->ack_lock, NULL);
    if (clampi_matcher_create(cfg, &mc->matcher) != 0) {
        mcomm_free(mc);
        return NULL;
    }
    return mc;
}

static int enable_joined(MPI_Comm comm, int err, const clampi_carrier_ops *ops, clampi_mcomm *mc,
                         const clampi_mcomm *parent, const clampi_wire_recipe *how, unsigned native_base,
                         unsigned native_cap);

/* Local checks and set-up, then collectives a program making many communicators pays on
 * each: one agreement on the local checks and the carrier's preparation, the carrier's
 * set-up (MPI: its duplicate; UCX: the endpoints' agreement), one agreement on its result,
 * the context id and the serial, and (UCX) a barrier, so nobody sends before everybody can
 * route. A communicator made from an enabled one skips the first agreement: on the MPI
 * carrier (how: carrier_ops.h, start) the duplicate, then one agreement; on the UCX
 * carrier (enable_like) one agreement and the barrier. */
static int enable_with(MPI_Comm comm, int err, const clampi_match_config *cfg, int carrier, unsigned native_base,
                       unsigned native_cap, const clampi_mcomm *parent, const clampi_wire_recipe *how) {
    if (err == MPI_SUCCESS && clampi_msg_comm(comm)) err = MPI_ERR_OTHER; /* already enabled */
    /* Freed communicators nothing names any more give their context ids and wires back
     * first: a program on the MPI carrier at depth 0 may make no call that progresses
     * clampi between freeing one communicator and enabling the next. */
    if (atomic_load_explicit(&clampi_msg_retired_n, memory_order_relaxed)) clampi_msg_retired_sweep();
    const clampi_carrier_ops *ops = clampi_carrier_ops_of(carrier);
    if (err == MPI_SUCCESS) err = clampi_msg_transport_init(carrier == CLAMPI_CARRIER_UCX);
    clampi_mcomm *mc = NULL;
    if (err == MPI_SUCCESS && !(mc = mcomm_new(comm, cfg))) err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        mc->ops = ops;
        if (ops->prepare) err = ops->prepare(mc);
    }
    if (ops->start && how) return enable_joined(comm, err, ops, mc, parent, how, native_base, native_cap);
    /* A parent whose set-up joined all its members (the same answer on every process):
     * the carrier's set-up is local, and one agreement follows. */
    if (ops->enable_like && how && parent && parent->ops == ops && parent->world) {
        if (err == MPI_SUCCESS) err = ops->enable_like(mc, parent);
        return enable_finish(comm, mc, err, parent, WIRES_NONE);
    }
    int any_err = 0, mine = err != MPI_SUCCESS;
    clampi_carrier_allreduce(&mine, &any_err, 1, MPI_INT, MPI_MAX, comm);
    if (any_err) {
        if (mc) mcomm_free(mc);
        return clampi_msg_raise(comm, err != MPI_SUCCESS ? err : MPI_ERR_OTHER, "enable failed on some process");
    }
    err = ops->enable(mc, native_base, native_cap); /* collective; agreed below */
    return enable_finish(comm, mc, err, NULL, WIRES_NONE);
}

int CMPIX_Comm_enable(MPI_Comm comm, MPI_Info info) {
    if (comm == MPI_COMM_NULL) return clampi_msg_raise(comm, MPI_ERR_COMM, "enable: MPI_COMM_NULL");
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) return clampi_msg_raise(comm, MPI_ERR_COMM, "enable: intercommunicators are not supported");
    clampi_match_config cfg;
    int carrier = CLAMPI_CARRIER_UCX;
    unsigned native_base = 0, native_cap = 0;
    /* Every process decides locally, then all agree, so nobody is left in a collective. */
    int err = clampi_msg_options(info, &cfg);
    if (err == MPI_SUCCESS) err = clampi_msg_carrier_options(info, &carrier, &native_base, &native_cap);
    /* MPI's own waits on a generalized handle (Fortran's) cannot take messages from MPI (no
     * MPI call inside MPI's progress): the MPI carrier needs clampi's completion calls. */
    if (err == MPI_SUCCESS && carrier == CLAMPI_CARRIER_MPI && !clampi_mreq_handles_persistent()) {
        if (clampi_opt_process(CLAMPI_OPT_MATCH_VERBOSE).u)
            fprintf(stderr, "clampi: clampi_match_carrier=mpi needs persistent handles (CLAMPI_MATCH_HANDLES)\n");
        err = MPI_ERR_INFO_VALUE;
    }
    return enable_with(comm, err, &cfg, carrier, native_base, native_cap, NULL, NULL);
}

int clampi_msg_comm_enable_like(MPI_Comm comm, const clampi_mcomm *parent, const clampi_wire_recipe *how) {
    int carrier = parent->ops == &clampi_carrier_mpi_ops ? CLAMPI_CARRIER_MPI : CLAMPI_CARRIER_UCX;
    return enable_with(comm, MPI_SUCCESS, &parent->cfg, carrier, parent->native_base, parent->native_cap, parent, how);
}

void clampi_msg_comm_wire_outside(const clampi_mcomm *parent, const clampi_wire_recipe *how) {
    MPI_Comm wire = MPI_COMM_NULL;
    if (parent->ops->start) parent->ops->start(parent, how, &wire);
    if (wire != MPI_COMM_NULL) PMPI_Comm_free(&wire);
}

/* The carrier's collective part (ops->start) on every process, whatever its local result
 * err (mc NULL where it failed early); then enable, local once start made the wire, and
 * enable_finish's one agreement on everybody's result, the context id and the serial.
 * A duplicate whose parent has a wire spare everywhere (the agreed hint says when) takes
 * it in that one agreement instead, and makes none. */
static int enable_joined(MPI_Comm comm, int err, const clampi_carrier_ops *ops, clampi_mcomm *mc,
                         const clampi_mcomm *parent, const clampi_wire_recipe *how, unsigned native_base,
                         unsigned native_cap) {
    int wires = WIRES_NONE;
    if (how->kind == CLAMPI_WIRE_DUP && ops->wire_slots && parent->ops == ops) {
        uint32_t spare, used;
        int hint;
        ops->wire_slots(parent, &spare, &used, &hint);
        wires = WIRES_GIVE;
        int rc = hint ? agree_context(comm, mc, err, parent, WIRES_TAKE) : AGREE_NO_SPARE;
        if (rc == MPI_SUCCESS) { /* mc->wire is the spare: the rest is local */
            rc = ops->enable(mc, native_base, native_cap);
            return rc == MPI_SUCCESS ? MPI_SUCCESS : clampi_msg_raise(comm, rc, NULL);
        }
        if (rc != AGREE_NO_SPARE) {
            if (mc) mcomm_free(mc);
            return clampi_msg_raise(comm, rc, "enable: failed on some process, or no free context id");
        }
    }
    MPI_Comm wire = MPI_COMM_NULL;
    int werr = ops->start(parent, how, &wire);
    if (werr == MPI_SUCCESS && wire == MPI_COMM_NULL) werr = MPI_ERR_OTHER;
    if (err == MPI_SUCCESS) err = werr;
    if (err == MPI_SUCCESS) {
        mc->wire = wire; /* mc's now: released with it if some process failed */
        err = ops->enable(mc, native_base, native_cap);
    } else if (wire != MPI_COMM_NULL) {
        PMPI_Comm_free(&wire);
    }
    return enable_finish(comm, mc, err, parent, wires);
}

/* The carrier's result, the context id and the lookup; then, where the carrier needs it, a
 * barrier. */
static int enable_finish(MPI_Comm comm, clampi_mcomm *mc, int carrier_err, const clampi_mcomm *parent, int wires) {
    int err = agree_context(comm, mc, carrier_err, parent, wires);
    if (err != MPI_SUCCESS) {
        if (mc) mcomm_free(mc);
        return clampi_msg_raise(comm, err,
                                carrier_err != MPI_SUCCESS ? "enable: the carrier's set-up"
                                                           : "enable: failed on some process, or no free context id");
    }
    err = mc->ops->barrier ? mc->ops->barrier(mc) : MPI_SUCCESS;
    return err == MPI_SUCCESS ? MPI_SUCCESS : clampi_msg_raise(comm, err, NULL);
}

int CMPIX_Comm_disable(MPI_Comm comm) {
    clampi_mcomm *mc = clampi_msg_comm(comm);
    if (!mc) return clampi_msg_raise(comm, MPI_ERR_COMM, "disable: communicator not enabled");
    /* Nothing here waits for the others (programs rely on MPI_Comm_free not synchronizing):
     * receives in clampi's queue go to MPI (carrier mpi) or stay matchable (carrier ucx)
     * until retire.c lets mc go. */
    pthread_mutex_lock(&enable_lock);
    PMPI_Comm_delete_attr(comm, keyval); /* on_comm_delete retires mc */
    pthread_mutex_unlock(&enable_lock);
    clampi_msg_retired_sweep(); /* nothing pending: gone at once */
    return MPI_SUCCESS;
}

/* MPI_Finalize with communicators still enabled (MPI_COMM_WORLD, typically) or retired. */
void clampi_msg_disable_all_local(void) {
    finalizing = 1;
    clampi_msg_retired_release_all();
    for (int i = 0; i < CLAMPI_MSG_MAX_CONTEXTS; i++) {
        clampi_mcomm *mc = atomic_load(&by_context[i]);
        if (mc) PMPI_Comm_delete_attr(mc->comm, keyval);
    }
}
