/* Memory handles between nodes: a copy of the liveness word at the peer, which the owner's
 * release clears (memhandle.h has the design this shortcuts).
 *
 * Peer (clampi_ucx_mh_subscribe): takes a free entry k of its parent window's
 * ctl->mh_mirror and stores the handle's generation there; reads the owner's ctl->mh_sub,
 * claims a zero entry with a compare-and-swap for the record (rank, k, slot); then fetches
 * the owner's liveness word once more. Live: from here on every check is a load of entry k.
 *
 * Owner (clampi_ucx_mh_invalidate, at release, after the slot's word was zeroed): every
 * record of the slot is taken back (compare-and-swap to 0) and the peer's copy is swapped
 * from the generation to 0 before release returns.
 *
 * Why nothing is missed: a record the owner did not see was made after the owner zeroed
 * the word, so the peer's fetch that follows it reads 0 and the handle is dead there. A
 * copy the owner clears late (the peer closed, its entry k reused) holds another
 * generation or 0 and the swap leaves it. Every write of these words is a UCX atomic (a
 * process's own through its endpoint to itself), so it holds where the network does the
 * atomics; the CPU only loads them. Records of windows closed before the release are taken
 * back at close; a window that reads its copy cleared gives the copy's entry back at once
 * (clampi_ucx_mh_copy_read_dead), so dead windows do not hold entries. A full mh_sub
 * (CLAMPI_UCX_MH_SUBS records per owner window) or mh_mirror leaves the window on a fetch
 * per check, and so does any failure on the way.
 *
 * The owner's release waits for the peers' processes to answer (over TCP their CPU does
 * the atomic): a window subscribes only where its process has the progress service
 * (clampi_progress=auto does on dynamic windows), so a peer waiting inside MPI answers. */
#include <stddef.h>
#include <string.h>

#include "backends/ucx/memhandle.h"
#include "backends/ucx/ucx_win.h"
#include "common/errors.h"
#include "services/ucx/context.h"

_Static_assert(CLAMPI_MH_SLOTS <= 4096 && CLAMPI_UCX_MH_MIRRORS <= 256, "record() has 12 bits of slot, 8 of copy");

#define SUB_FIELD(j) (offsetof(clampi_ucx_ctl, mh_sub) + (size_t)(j) * sizeof(uint64_t))
#define MIRROR_FIELD(k) (offsetof(clampi_ucx_ctl, mh_mirror) + (size_t)(k) * sizeof(uint64_t))

/* A record: the peer's rank + 1 (so never 0), its copy's index, the owner's slot. */
static uint64_t record(int rank, int k, uint32_t slot) {
    return ((uint64_t)(rank + 1) << 20) | ((uint64_t)k << 12) | (slot & 0xfffu);
}
static int record_rank(uint64_t v) { return (int)(v >> 20) - 1; }
static int record_copy(uint64_t v) { return (int)((v >> 12) & 0xffu); }
static uint32_t record_slot(uint64_t v) { return (uint32_t)(v & 0xfffu); }

/* A free entry of u's mh_mirror, or -1. */
static int mirror_take(clampi_ucx_win *u) {
    uint64_t used = __atomic_load_n(&u->mh_mirrors_used, __ATOMIC_RELAXED);
    for (;;) {
        if (~used == 0) return -1;
        int k = __builtin_ctzll(~used);
        if (__atomic_compare_exchange_n(&u->mh_mirrors_used, &used, used | (1ull << k), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return k;
    }
}
/* Sets a copy of this process through UCX (an owner's late swap may be on its way). */
static ucs_status_t mirror_set(clampi_ucx_win *u, int k, uint64_t value) {
    uint64_t old = 0;
    return clampi_ucx_ctl_atomic(u, &u->main, u->rank, MIRROR_FIELD(k), UCP_ATOMIC_OP_SWAP, value, &old);
}
static void mirror_put(clampi_ucx_win *u, int k) {
    mirror_set(u, k, 0);
    __atomic_fetch_and(&u->mh_mirrors_used, ~(1ull << k), __ATOMIC_ACQ_REL);
}

/* Compare-and-swap of a control-block word of target: *old gets what it held. */
static ucs_status_t ctl_cas(clampi_ucx_win *u, int target, size_t field, uint64_t expect, uint64_t value,
                            uint64_t *old) {
    *old = value; /* clampi_ucx_ctl_atomic: the swap value on entry, the old value after */
    return clampi_ucx_ctl_atomic(u, &u->main, target, field, UCP_ATOMIC_OP_CSWAP, expect, old);
}

int clampi_ucx_mh_subscribe(clampi_mh_win *m) {
    clampi_ucx_win *u = clampi_ucx_of(m->parent);
    if (!u || !u->ctl || m->target == u->rank || !u->progress_client) return MPI_SUCCESS;
    int k = mirror_take(u);
    if (k < 0) return MPI_SUCCESS;
    if (mirror_set(u, k, m->generation) != UCS_OK) {
        __atomic_fetch_and(&u->mh_mirrors_used, ~(1ull << k), __ATOMIC_ACQ_REL);
        return MPI_SUCCESS;
    }
    /* the owner's records, then a claim on a free one */
    uint64_t subs[CLAMPI_UCX_MH_SUBS], raddr;
    ucp_rkey_h rkey;
    ucp_request_param_t p = {0};
    ucs_status_t st = clampi_ucx_lane_ctl(u, &u->main, m->target, SUB_FIELD(0), &raddr, &rkey);
    if (st == UCS_OK) st = clampi_ucx_wait(m->worker, ucp_get_nbx(m->ep, subs, sizeof subs, raddr, rkey, &p));
    const uint64_t code = record(u->rank, k, m->slot);
    int j = 0;
    for (; st == UCS_OK && j < CLAMPI_UCX_MH_SUBS; j++) {
        uint64_t old;
        if (subs[j] || (st = ctl_cas(u, m->target, SUB_FIELD(j), 0, code, &old)) != UCS_OK) continue;
        if (old == 0) break;
    }
    if (st != UCS_OK || j == CLAMPI_UCX_MH_SUBS) { /* no copy: the word is fetched as before */
        mirror_put(u, k);
        return MPI_SUCCESS;
    }
    /* recorded: a release from now on clears the copy; one that came before shows here */
    uint64_t g;
    st = clampi_ucx_mh_fetch_word(m, &g);
    if (st != UCS_OK || g != m->generation) {
        uint64_t old;
        ctl_cas(u, m->target, SUB_FIELD(j), code, 0, &old);
        mirror_put(u, k);
        return st != UCS_OK ? MPI_SUCCESS : clampi_error_code(CLAMPI_E_RANGE);
    }
    m->mirror = k + 1;
    m->sub = j + 1;
    m->sub_code = code;
    __atomic_store_n(&m->gen_ptr, &u->ctl->mh_mirror[k], __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

void clampi_ucx_mh_unsubscribe(clampi_mh_win *m) {
    if (!m->mirror) return;
    clampi_ucx_win *u = clampi_ucx_of(m->parent);
    uint64_t old;
    ctl_cas(u, m->target, SUB_FIELD(m->sub - 1), m->sub_code, 0, &old); /* an owner gone: nothing to take back */
    mirror_put(u, m->mirror - 1);
    m->mirror = m->sub = 0;
}

void clampi_ucx_mh_copy_read_dead(clampi_mh_win *m, const uint64_t *word) {
    static const uint64_t released = 0; /* never a live generation */
    clampi_ucx_win *u = clampi_ucx_of(m->parent);
    int k = __atomic_load_n(&m->mirror, __ATOMIC_ACQUIRE);
    if (!k || word != &u->ctl->mh_mirror[k - 1] ||
        !__atomic_compare_exchange_n(&m->mirror, &k, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return;
    /* the copy reads 0 only once the owner took the record back: nothing to do there */
    __atomic_store_n(&m->gen_ptr, &released, __ATOMIC_RELEASE);
    mirror_put(u, k - 1);
    m->sub = 0;
}

int clampi_ucx_mh_invalidate(clampi_ucx_win *u, uint32_t slot, uint64_t generation) {
    if (!u || !u->ctl) return 0;
    int failed = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the slot's word is 0 before the records are read */
    for (int j = 0; j < CLAMPI_UCX_MH_SUBS; j++) {
        uint64_t v = __atomic_load_n(&u->ctl->mh_sub[j], __ATOMIC_ACQUIRE), old;
        if (!v || record_slot(v) != (slot & 0xfffu)) continue;
        /* taken back through UCX (a peer's claim or close may race it); then the copy */
        if (ctl_cas(u, u->rank, SUB_FIELD(j), v, 0, &old) != UCS_OK) {
            failed++;
            continue;
        }
        if (old != v) continue; /* the peer's window closed meanwhile */
        int peer = record_rank(v);
        if (peer >= 0 && peer < u->nranks &&
            ctl_cas(u, peer, MIRROR_FIELD(record_copy(v)), generation, 0, &old) != UCS_OK)
            failed++;
    }
    return failed;
}
