/* Creation and destruction of a UCX window's backend state, and dynamic attach/detach.
 *
 * Creation (collective over the window's communicator, after the MPI window exists):
 *   1. the window's communicator: a duplicate shared with the communicator's other windows
 *      (win_comm.c; PSCW notices, fence barrier, free);
 *   2. the process worker and its endpoints to every rank's process worker, shared with
 *      other windows (addresses allgathered only when some rank lacks one; endpoints made
 *      now when clampi_progress=auto must read their transports, else at first use);
 *   3. ucp_mem_map of the window memory (static windows) and of the control block;
 *   4. allgather of (base address, control block address, place in the node-shared heap)
 *      and allgatherv of packed rkeys;
 *   5. progress thread per clampi_progress.
 * Every step's success is agreed on (MPI_MIN), so all ranks fail or succeed together. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/xorshift.h"
#include "services/heap.h"
#include "services/ucx/context.h"
#include "backends/ucx/ucx_win.h"

/* The order MPI_Finalize frees windows left to it in (clampi_bwin.finalize_order). Each
 * window's place is a Lamport clock: one more than the largest clock of its members, which
 * then all move to it, so a window made after another on a shared communicator sorts
 * above it; windows made at once on other communicators are ordered by the largest of
 * their members' random tie-breakers. The same order on every process: freeing highest
 * first, nobody waits in one window's collective free for a process busy in another's. */
static unsigned finalize_clock;

static unsigned tie_breaker(void) {
    static _Thread_local uint64_t x;
    if (!x) x = (uint64_t)(uintptr_t)&x ^ (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15u;
    return (unsigned)(clampi_xorshift64(&x) >> 16);
}

static uint64_t finalize_order_agreed(unsigned clock, unsigned tie) {
    unsigned mine = clock + 1, seen = __atomic_load_n(&finalize_clock, __ATOMIC_RELAXED);
    while (seen < mine &&
           !__atomic_compare_exchange_n(&finalize_clock, &seen, mine, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    return (uint64_t)mine << 32 | tie;
}

static int agree(MPI_Comm comm, int ok) {
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

static ucs_status_t map_memory(ucp_context_h ctx, void *base, size_t size, ucp_mem_h *memh) {
    ucp_mem_map_params_t p;
    memset(&p, 0, sizeof p);
    p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    p.address = base;
    p.length = size;
    return ucp_mem_map(ctx, &p, memh);
}

/* Memory allocated BY UCX (its shared-memory transports, posix/sysv, can then map it in
 * peers: RMA and atomics on it are one-sided; memory malloc'ed by the program is reachable
 * over shared memory only with cma, which has no atomics: UCX then emulates atomics with
 * messages the target must progress). Used for the control block and CMPI_Win_allocate. */
int clampi_ucx_mem_alloc(size_t size, void **base, void **handle) {
    ucp_context_h ctx;
    if (clampi_ucx_context(&ctx) != MPI_SUCCESS) return MPI_ERR_OTHER;
    ucp_mem_map_params_t p;
    memset(&p, 0, sizeof p);
    p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    p.address = NULL;
    p.length = size ? size : 1;
    p.flags = UCP_MEM_MAP_ALLOCATE;
    ucp_mem_h memh;
    if (ucp_mem_map(ctx, &p, &memh) != UCS_OK) return MPI_ERR_NO_MEM;
    ucp_mem_attr_t attr;
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    if (ucp_mem_query(memh, &attr) != UCS_OK) {
        ucp_mem_unmap(ctx, memh);
        return MPI_ERR_NO_MEM;
    }
    memset(attr.address, 0, size);
    *base = attr.address;
    *handle = memh;
    return MPI_SUCCESS;
}

void clampi_ucx_mem_free(void *handle) {
    ucp_context_h ctx;
    if (handle && clampi_ucx_context(&ctx) == MPI_SUCCESS) ucp_mem_unmap(ctx, handle);
}

/* Allgatherv of each rank's packed rkey (len 0 = none): blob + offsets[nranks + 1]. */
static int exchange_rkey(clampi_ucx_win *u, ucp_mem_h memh, char **blob, size_t **offsets) {
    void *packed = NULL;
    size_t plen = 0;
    int ok = !memh || ucp_rkey_pack(u->ctx, memh, &packed, &plen) == UCS_OK;
    int n = u->nranks, mylen = ok ? (int)plen : 0;
    int *lens = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    size_t *off = malloc(sizeof(size_t) * ((size_t)n + 1));
    ok = ok && lens && displs && off;
    int rc = MPI_ERR_NO_MEM;
    char *all = NULL;
    if (agree(u->comm, ok) && (rc = PMPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, u->comm)) == MPI_SUCCESS) {
        size_t total = 0;
        for (int r = 0; r < n; r++) displs[r] = (int)total, off[r] = total, total += (size_t)lens[r];
        off[n] = total;
        all = malloc(total ? total : 1);
        rc = agree(u->comm, all != NULL)
                 ? PMPI_Allgatherv(packed, mylen, MPI_BYTE, all, lens, displs, MPI_BYTE, u->comm)
                 : MPI_ERR_NO_MEM;
    }
    if (packed) ucp_rkey_buffer_release(packed);
    free(lens);
    free(displs);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(off);
        return rc;
    }
    *blob = all;
    *offsets = off;
    return MPI_SUCCESS;
}

/* Where every rank's window memory and control block are: allgather of (base, control
 * block, node-shared heap, place in it). A rank whose memory lies in the heap
 * (services/heap.h: MPI_Alloc_mem under the preload, CMPI_Alloc_mem) names its segment and
 * offset; every process of that heap maps the segment, so its puts, gets and accumulates to
 * that rank are loads and stores (u->direct), needing neither UCX nor the target's CPU.
 * When every rank is on one heap and every rank's memory is in it (or empty), nobody
 * reaches the memory through UCX, so intrinsic atomics may be CPU atomics on it, the
 * target's own included (u->all_direct, target.c): decided from the gathered data alone,
 * the same on every rank. clampi_shm_direct=false on a rank (its environment or the window's
 * info): it names no heap, so nobody copies to or from its memory, and it copies to nobody. */
static int exchange_places(clampi_ucx_win *u, int allowed, void *base, size_t size) {
    enum { BASE, CTL, HEAP, SEG, OFF, N };
    enum { OUTSIDE = -1, EMPTY = -2 };
    const int n = u->nranks;
    const uint64_t heap = allowed ? clampi_heap_id() : 0;
    int32_t seg = OUTSIDE;
    uint64_t off = 0;
    if (size == 0)
        seg = EMPTY;
    else if (!heap || !clampi_heap_locate(base, size, &seg, &off))
        seg = OUTSIDE;
    uint64_t mine[N] = {(uint64_t)(uintptr_t)base, (uint64_t)(uintptr_t)u->ctl, heap, (uint64_t)(int64_t)seg, off};
    uint64_t *all = malloc(sizeof mine * (size_t)n);
    u->direct = calloc((size_t)n, sizeof *u->direct);
    if (!agree(u->comm, all != NULL && u->direct != NULL)) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    int rc = PMPI_Allgather(mine, N, MPI_UINT64_T, all, N, MPI_UINT64_T, u->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    int every = all[HEAP] != 0;
    for (int t = 0; t < n; t++) {
        const uint64_t *p = all + (size_t)N * (size_t)t;
        const int64_t s = (int64_t)p[SEG];
        u->peer_base[t] = p[BASE], u->peer_ctl[t] = p[CTL];
        if (heap && p[HEAP] == heap && s >= 0) u->direct[t] = clampi_heap_addr((int32_t)s, p[OFF]);
        every = every && p[HEAP] == all[HEAP] && (s >= 0 || s == EMPTY);
    }
    u->all_direct = every && !u->dynamic;
    free(all);
    return MPI_SUCCESS;
}

static void release(clampi_ucx_win *u) {
    clampi_ucx_progress_stop(u);
    /* Thread lanes and the process lane: endpoints closed, workers destroyed. */
    for (clampi_ucx_thread *t = u->threads, *next; t; t = next) {
        next = t->next;
        if (t->lane_ready) clampi_ucx_lane_fini(u, &t->lane);
        free(t->main_own);
        free(t);
    }
    u->threads = NULL;
    clampi_ucx_lane_fini(u, &u->main);
    if (u->have_key) pthread_key_delete(u->thread_key);
    pthread_mutex_destroy(&u->threads_lock);
    for (uint64_t i = 0; u->ctl && i < u->ctl->nregions; i++)
        if (u->region_memh[i]) ucp_mem_unmap(u->ctx, u->region_memh[i]);
    free(u->region_memh);
    clampi_ucx_mem_free(u->table_memh);
    for (int i = 0; i < u->nretired; i++) clampi_ucx_mem_free(u->retired[i]);
    free(u->retired);
    if (u->memh) ucp_mem_unmap(u->ctx, u->memh);
    if (u->ctl_memh) ucp_mem_unmap(u->ctx, u->ctl_memh); /* also frees u->ctl */
    free(u->direct);
    free(u->peer_base), free(u->peer_ctl), free(u->rkey_blob), free(u->ctl_rkey_blob), free(u->rkey_off);
    free(u->ctl_rkey_off), free(u->world), free(u->addr_blob), free(u->addr_off), free(u->lock_type),
        free(u->start_ranks);
    free(u->post_ranks);
    clampi_ucx_win_comm_close(u);
    free(u);
}

int clampi_ucx_win_setup(clampi_bwin *w, MPI_Comm comm, void *base, MPI_Aint size, void *memh) {
    const int dynamic = w->dynamic;
    clampi_ucx_win *u = calloc(1, sizeof *u);
    int ok = u != NULL && clampi_ucx_context(u ? &u->ctx : NULL) == MPI_SUCCESS;
    if (!agree(comm, ok)) {
        free(u);
        return MPI_ERR_OTHER;
    }
    u->refs = 1;
    static uint64_t next_serial;
    u->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
    u->comm = MPI_COMM_NULL;
    u->dynamic = dynamic;
    u->base = base;
    u->size = (size_t)size;
    pthread_mutex_init(&u->threads_lock, NULL);
    PMPI_Comm_rank(comm, &u->rank);
    PMPI_Comm_size(comm, &u->nranks);
    int provided;
    MPI_Query_thread(&provided);
    u->mt = provided == MPI_THREAD_MULTIPLE;
    if (clampi_ucx_win_comm_open(u, comm) != MPI_SUCCESS) {
        pthread_mutex_destroy(&u->threads_lock);
        free(u);
        return MPI_ERR_OTHER;
    }
    u->have_key = pthread_key_create(&u->thread_key, NULL) == 0;
    /* MULTI when user threads or a progress thread may share the process worker. */
    ucs_thread_mode_t mode =
        (u->mt || w->progress != CLAMPI_PROGRESS_NONE) ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE;
    int n = u->nranks;
    u->lock_type = calloc((size_t)n, sizeof *u->lock_type);
    u->peer_base = calloc((size_t)n, sizeof *u->peer_base);
    u->peer_ctl = calloc((size_t)n, sizeof *u->peer_ctl);
    void *ctl, *ctl_memh;
    if (clampi_ucx_mem_alloc(sizeof *u->ctl, &ctl, &ctl_memh) == MPI_SUCCESS) {
        u->ctl = ctl;
        u->ctl_memh = ctl_memh;
    }
    u->memh = memh; /* CMPI_Win_allocate: memory from clampi_ucx_mem_alloc, now ours */
    u->mem_one_sided = !dynamic && (memh || size == 0);
    ok = u->lock_type && u->peer_base && u->peer_ctl && u->ctl &&
         clampi_ucx_lane_init(u, &u->main, mode, 0) == MPI_SUCCESS;
    int rc = MPI_ERR_OTHER;
    if (!agree(u->comm, ok)) goto fail;
    if ((rc = exchange_places(u, w->shm_direct, base, dynamic ? 0 : (size_t)size)) != MPI_SUCCESS) goto fail;
    if (u->all_direct) u->mem_one_sided = 1; /* no process reaches it through UCX */
    rc = MPI_ERR_OTHER;
    /* Endpoints to every rank's process worker: the process worker's own, shared with other
     * windows and made at first use, or (a member outside MPI_COMM_WORLD) the window's,
     * made now. clampi_progress=auto asks about some peers' transports (progress.c). */
    rc = clampi_ucx_peers_join(&u->main.pw->peers, u->comm, &u->world);
    if (rc == MPI_SUCCESS && !u->world)
        rc = clampi_ucx_worker_address_exchange(u->comm, u->main.worker, &u->addr_blob, &u->addr_off);
    if (rc != MPI_SUCCESS) goto fail;
    ok = 1;
    for (int t = 0; t < n && ok && !u->world; t++) ok = clampi_ucx_lane_ep_peek(u, &u->main, t) != NULL;
    int wants_thread = 0;
    if (ok && w->progress == CLAMPI_PROGRESS_AUTO) {
        wants_thread = clampi_ucx_auto_wants_thread(u);
        ok = wants_thread >= 0;
    }
    if (!dynamic && size > 0 && !u->memh) ok = ok && map_memory(u->ctx, base, (size_t)size, &u->memh) == UCS_OK;
    /* agreed: everyone got here, whether anyone's peers need the target CPU, and the
     * window's place in the order MPI_Finalize frees windows in (finalize_order) */
    int failed_wants[4] = {!ok, wants_thread > 0, (int)__atomic_load_n(&finalize_clock, __ATOMIC_RELAXED),
                           (int)(tie_breaker() & INT_MAX)},
        any[4] = {1, 0, 0, 0};
    PMPI_Allreduce(failed_wants, any, 4, MPI_INT, MPI_MAX, u->comm);
    rc = MPI_ERR_OTHER;
    if (any[0]) goto fail;
    u->auto_thread = any[1];
    w->finalize_order = finalize_order_agreed((unsigned)any[2], (unsigned)any[3]);
    if ((rc = exchange_rkey(u, u->memh, &u->rkey_blob, &u->rkey_off)) != MPI_SUCCESS) goto fail;
    if ((rc = exchange_rkey(u, u->ctl_memh, &u->ctl_rkey_blob, &u->ctl_rkey_off)) != MPI_SUCCESS) goto fail;
    rc = MPI_ERR_OTHER;
    if (!agree(u->comm, clampi_ucx_progress_start(u, w->progress) == MPI_SUCCESS)) goto fail;
    w->state = u;
    w->ops = &clampi_backend_ucx;
    return MPI_SUCCESS;
fail:
    /* Peers may already hold endpoints to us: close ours only after everyone got here. */
    clampi_ucx_barrier(u->comm, u->main.eps ? u->main.worker : NULL, u->main.eps ? u->main.poller : NULL);
    release(u);
    return rc;
}

/* Collective: everyone's operations on everyone's memory complete before anything goes. */
static int teardown(clampi_bwin *w) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    clampi_ucx_flush_everything(u, -1);
    /* After a quiesce every process has flushed and met the others inside this free: no
     * operation on anyone's memory is left, and none may start (the window is being freed).
     * quiesced is the same on every process (agreed there), so is the number of barriers. */
    int rc = u->quiesced ? MPI_SUCCESS : clampi_ucx_barrier(u->comm, u->main.worker, u->main.poller);
    if (rc != MPI_SUCCESS) return rc;
    /* Close endpoints while peers keep progressing (their close flushes need us); the
     * progress thread, if any, keeps our process worker going meanwhile. */
    for (clampi_ucx_thread *t = u->threads; t; t = t->next)
        if (t->lane_ready) { /* the progress thread may be progressing the lane: its mutex */
            pthread_mutex_lock(&t->lane.mutex);
            clampi_ucx_lane_close(u, &t->lane);
            pthread_mutex_unlock(&t->lane.mutex);
        }
    clampi_ucx_barrier(u->comm, u->main.worker, u->main.poller);
    clampi_ucx_progress_stop(u);
    clampi_ucx_lane_close(u, &u->main);
    clampi_ucx_barrier(u->comm, u->main.worker, u->main.poller);
    release(u);
    w->state = NULL;
    w->ops = &clampi_backend_mpi;
    return MPI_SUCCESS;
}

void clampi_ucx_win_teardown(clampi_bwin *w) { teardown(w); }

/* A failure here (under ULFM: a peer died) is the window's, raised while nothing is freed. */
int clampi_ucx_quiesce(clampi_bwin *w) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    clampi_ucx_flush_everything(u, -1);
    /* A barrier that also asks whether any process has thread lanes: teardown closes those
     * between two barriers of its own, so that a peer still inside MPI's window free is not
     * needed for their close flushes. Only where none has them is its first barrier saved. */
    int lanes = 0;
    for (clampi_ucx_thread *t = u->threads; t; t = t->next) lanes |= t->lane_ready;
    int rc = clampi_ucx_agree_max(u->comm, &lanes, u->main.worker, u->main.poller);
    u->quiesced = rc == MPI_SUCCESS && !lanes; /* the same on every process */
    return clampi_bwin_raise_rc(w, rc);
}

int clampi_ucx_free(clampi_bwin *w) {
    if (clampi_ucx_of(w)->refs > 1) { /* a duplicate: the parent keeps the state */
        clampi_ucx_of(w)->refs--;
        w->state = NULL;
        return MPI_SUCCESS;
    }
    /* Our operations complete first; then the MPI window goes (collective: nobody uses
     * the memory after it), then the UCX state, which may own the memory. */
    clampi_ucx_flush_everything(clampi_ucx_of(w), -1);
    MPI_Win shm = w->shm_win, win = w->win;
    int rc = PMPI_Win_free(&win);
    if (rc != MPI_SUCCESS) { /* the window stays: its next free quiesces again */
        clampi_ucx_of(w)->quiesced = 0;
        return rc;
    }
    if (shm != MPI_WIN_NULL && shm != w->win) PMPI_Win_free(&shm);
    if (w->shm_comm != MPI_COMM_NULL) PMPI_Comm_free(&w->shm_comm);
    return teardown(w);
}

/* ---- dynamic windows: this rank's region table (read remotely by origins) ---------- */
static void table_begin(clampi_ucx_ctl *c) {
    __atomic_store_n(&c->version, c->version + 1, __ATOMIC_RELAXED); /* odd: changing */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static void table_end(clampi_ucx_ctl *c) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&c->version, c->version + 1, __ATOMIC_RELEASE); /* even: stable */
}

/* A full region table is replaced by one twice as large (UCX-allocated: origins read it
 * one-sidedly); the old one stays mapped until the window is freed (an origin may be
 * reading it: the version tells it to read again). Called between table_begin/_end. */
static int grow_table(clampi_ucx_win *u) {
    clampi_ucx_ctl *c = u->ctl;
    uint64_t cap = u->table_cap ? 2 * u->table_cap : CLAMPI_UCX_REGIONS_FIRST;
    void *mem, *memh, *packed = NULL;
    size_t plen = 0;
    ucp_mem_h *memhs = realloc(u->region_memh, sizeof *memhs * cap);
    if (!memhs) return MPI_ERR_NO_MEM;
    u->region_memh = memhs;
    void **retired = realloc(u->retired, sizeof *retired * (size_t)(u->nretired + 1));
    if (!retired) return MPI_ERR_NO_MEM;
    u->retired = retired;
    if (clampi_ucx_mem_alloc(sizeof(clampi_ucx_region) * cap, &mem, &memh) != MPI_SUCCESS) return MPI_ERR_NO_MEM;
    if (ucp_rkey_pack(u->ctx, memh, &packed, &plen) != UCS_OK || plen > CLAMPI_UCX_RKEY_MAX) {
        if (plen <= CLAMPI_UCX_RKEY_MAX) packed = NULL;
        if (packed) ucp_rkey_buffer_release(packed);
        clampi_ucx_mem_free(memh);
        return MPI_ERR_NO_MEM;
    }
    if (c->nregions) memcpy(mem, u->table, sizeof(clampi_ucx_region) * c->nregions);
    if (u->table_memh) u->retired[u->nretired++] = u->table_memh;
    u->table = mem;
    u->table_memh = memh;
    u->table_cap = cap;
    c->table_addr = (uint64_t)(uintptr_t)mem;
    c->table_cap = cap;
    c->table_rkey_len = plen;
    memcpy(c->table_rkey, packed, plen);
    ucp_rkey_buffer_release(packed);
    return MPI_SUCCESS;
}

int clampi_ucx_attach(clampi_bwin *w, void *base, MPI_Aint size) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (size < 0) return clampi_bwin_raise(w, CLAMPI_E_ARG);
    if (size == 0) return MPI_SUCCESS;
    clampi_ucx_ctl *c = u->ctl;
    ucp_mem_h memh;
    if (map_memory(u->ctx, base, (size_t)size, &memh) != UCS_OK) return clampi_bwin_raise(w, CLAMPI_E_BASE);
    void *packed;
    size_t plen;
    if (ucp_rkey_pack(u->ctx, memh, &packed, &plen) != UCS_OK || plen > CLAMPI_UCX_RKEY_MAX) {
        if (plen <= CLAMPI_UCX_RKEY_MAX) packed = NULL;
        if (packed) ucp_rkey_buffer_release(packed);
        ucp_mem_unmap(u->ctx, memh);
        return clampi_bwin_raise(w, CLAMPI_E_BASE);
    }
    uint64_t i = c->nregions;
    table_begin(c);
    int grown = i < u->table_cap ? MPI_SUCCESS : grow_table(u);
    if (grown == MPI_SUCCESS) {
        clampi_ucx_region *r = &u->table[i];
        r->base = (uint64_t)(uintptr_t)base;
        r->size = (uint64_t)size;
        r->id = ++u->next_region_id;
        r->rkey_len = (uint32_t)plen;
        memcpy(r->rkey, packed, plen);
        u->region_memh[i] = memh;
        c->nregions++;
    }
    table_end(c);
    ucp_rkey_buffer_release(packed);
    if (grown != MPI_SUCCESS) {
        ucp_mem_unmap(u->ctx, memh);
        return clampi_bwin_raise(w, CLAMPI_E_NOMEM);
    }
    /* The MPI window gets the memory too: w.win stays a valid MPI window over it. */
    return PMPI_Win_attach(w->win, base, size);
}

int clampi_ucx_detach(clampi_bwin *w, const void *base) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    clampi_ucx_ctl *c = u->ctl;
    int i;
    for (i = 0; i < (int)c->nregions; i++)
        if (u->table[i].base == (uint64_t)(uintptr_t)base) break;
    if (i == (int)c->nregions) return clampi_bwin_raise(w, CLAMPI_E_BASE);
    int rc = PMPI_Win_detach(w->win, base);
    if (rc != MPI_SUCCESS) return rc;
    ucp_mem_h memh = u->region_memh[i];
    int last = (int)c->nregions - 1;
    table_begin(c);
    u->table[i] = u->table[last];
    u->region_memh[i] = u->region_memh[last];
    u->region_memh[last] = NULL;
    c->nregions--;
    table_end(c);
    ucp_mem_unmap(u->ctx, memh);
    return MPI_SUCCESS;
}
