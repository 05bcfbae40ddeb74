/* Lanes: a worker with endpoints and unpacked rkeys for every target. The process lane is
 * built at window creation, on the process worker and its endpoints; a thread's lane on its
 * first operation (thread scope). */
#include <stdlib.h>
#include <string.h>

#include "services/ucx/context.h"
#include "services/ucx/mpi_polls.h"
#include "backends/ucx/ucx_win.h"
#include "common/wait.h"

int clampi_ucx_lane_init(clampi_ucx_win *u, clampi_ucx_lane *l, ucs_thread_mode_t mode, int is_thread) {
    memset(l, 0, sizeof *l);
    l->is_thread = is_thread;
    l->u = u;
    size_t n = (size_t)u->nranks;
    l->eps = calloc(n, sizeof *l->eps);
    l->rkeys = calloc(n, sizeof *l->rkeys);
    l->ctl_rkeys = calloc(n, sizeof *l->ctl_rkeys);
    l->pending = calloc(n, sizeof *l->pending);
    l->amo_base = calloc(n, sizeof *l->amo_base);
    l->dirty = calloc(n, sizeof *l->dirty);
    if (u->dynamic) l->dyn = calloc(n, sizeof *l->dyn);
    if (!l->eps || !l->rkeys || !l->ctl_rkeys || !l->pending || !l->amo_base || !l->dirty || (u->dynamic && !l->dyn) ||
        pthread_mutex_init(&l->mutex, NULL) != 0) {
        free(l->eps), free(l->rkeys), free(l->ctl_rkeys), free(l->pending), free(l->amo_base), free(l->dirty),
            free(l->dyn);
        return MPI_ERR_NO_MEM;
    }
    /* the process lane takes the process worker (process_worker.h), a thread lane a new one */
    l->mode = mode;
    int rc;
    if (is_thread) {
        rc = clampi_ucx_worker_create(mode, &l->worker);
    } else if ((rc = clampi_ucx_process_worker_get(mode, &l->pw)) == MPI_SUCCESS) {
        l->worker = l->pw->worker;
        l->poller = &l->pw->poller;
    }
    if (rc != MPI_SUCCESS) {
        pthread_mutex_destroy(&l->mutex);
        free(l->eps), free(l->rkeys), free(l->ctl_rkeys), free(l->pending), free(l->amo_base), free(l->dirty),
            free(l->dyn);
        l->eps = NULL;
    }
    return rc;
}

static void drop_dyncache(clampi_ucx_dyncache *d) {
    for (int i = 0; i < d->n; i++)
        if (d->r[i].rkey) ucp_rkey_destroy(d->r[i].rkey);
    if (d->table_rkey) ucp_rkey_destroy(d->table_rkey);
    free(d->r);
    memset(d, 0, sizeof *d);
}

void clampi_ucx_lane_close(clampi_ucx_win *u, clampi_ucx_lane *l) {
    if (!l->eps) return;
    for (int t = 0; t < u->nranks; t++) {
        if (l->rkeys[t]) ucp_rkey_destroy(l->rkeys[t]);
        if (l->ctl_rkeys[t]) ucp_rkey_destroy(l->ctl_rkeys[t]);
        l->rkeys[t] = l->ctl_rkeys[t] = NULL;
        l->amo_base[t] = NULL; /* it was the rkey's mapping */
        if (l->dyn) drop_dyncache(&l->dyn[t]);
    }
    /* Flush-mode closes: over TCP they need the peers' progress, and a peer answers on its
     * process worker, so ours is progressed too while we wait (peers do the same). */
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    for (int t = 0; t < u->nranks; t++) {
        if (!l->eps[t]) continue;
        if (u->world && !l->is_thread) { /* the process worker's: they stay for other windows */
            l->eps[t] = NULL;
            l->held = 0;
            continue;
        }
        void *req = ucp_ep_close_nbx(l->eps[t], &param);
        l->eps[t] = NULL;
        if (req == NULL || UCS_PTR_IS_ERR(req)) continue;
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            clampi_ucx_poller_progress(l->poller, l->worker);
            if (l != &u->main) clampi_ucx_poller_progress(u->main.poller, u->main.worker);
        }
        ucp_request_free(req);
    }
}

void clampi_ucx_lane_fini(clampi_ucx_win *u, clampi_ucx_lane *l) {
    if (!l->eps) return;
    clampi_ucx_lane_close(u, l);
    if (l->is_thread)
        ucp_worker_destroy(l->worker);
    else
        clampi_ucx_process_worker_put(l->pw);
    pthread_mutex_destroy(&l->mutex);
    free(l->eps), free(l->rkeys), free(l->ctl_rkeys), free(l->pending), free(l->amo_base), free(l->dirty), free(l->dyn);
    l->eps = NULL;
}

void clampi_ucx_lane_enter(clampi_ucx_lane *l) {
    if (l->is_thread) pthread_mutex_lock(&l->mutex);
}
void clampi_ucx_lane_leave(clampi_ucx_lane *l) {
    if (l->is_thread) pthread_mutex_unlock(&l->mutex);
}

/* The calling thread's last answer: (window serial, thread state). Serials are never reused,
 * so a window freed and another allocated at the same address cannot hit. */
static __thread struct {
    uint64_t serial;
    clampi_ucx_thread *t;
} last_thread __attribute__((tls_model("initial-exec"))); /* no __tls_get_addr on the op path */

clampi_ucx_thread *clampi_ucx_thread_current(clampi_ucx_win *u) {
    if (last_thread.serial == u->serial && last_thread.t) return last_thread.t;
    if (!u->have_key) return NULL;
    clampi_ucx_thread *t = pthread_getspecific(u->thread_key);
    if (t) {
        last_thread.serial = u->serial, last_thread.t = t;
        return t;
    }
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->main_own = calloc((size_t)u->nranks, sizeof *t->main_own);
    if (!t->main_own) {
        free(t);
        return NULL;
    }
    pthread_setspecific(u->thread_key, t);
    pthread_mutex_lock(&u->threads_lock);
    t->next = u->threads;
    __atomic_store_n(&u->threads, t, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&u->threads_lock);
    return t;
}

clampi_ucx_lane *clampi_ucx_lane_current(clampi_bwin *w) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (!w->thread_scope) return &u->main;
    clampi_ucx_thread *t = clampi_ucx_thread_current(u);
    if (!t) return NULL;
    if (!__atomic_load_n(&t->lane_ready, __ATOMIC_ACQUIRE)) {
        /* SERIALIZED: the owner thread, and unlock/fence/free under the lane mutex. */
        if (clampi_ucx_lane_init(u, &t->lane, UCS_THREAD_MODE_SERIALIZED, 1) != MPI_SUCCESS) return NULL;
        __atomic_store_n(&t->lane_ready, 1, __ATOMIC_RELEASE);
    }
    return &t->lane;
}

void clampi_ucx_lane_mark(clampi_ucx_lane *l, int target) {
    if (!__atomic_load_n(&l->dirty[target], __ATOMIC_RELAXED)) __atomic_store_n(&l->dirty[target], 1, __ATOMIC_SEQ_CST);
}

/* Whoever takes the endpoint to hand it work marks the target before (so a flush in the
 * same thread sees it) and, where a flush of another thread may run meanwhile, after
 * (clampi_ucx_lane_count, clampi_ucx_target_end): a flush that cleared the mark between
 * the two did not owe that operation anything, it ran concurrently. */
ucp_ep_h clampi_ucx_lane_ep(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    clampi_ucx_lane_mark(l, target);
    return clampi_ucx_lane_ep_peek(u, l, target);
}

/* The process lane takes the process worker's endpoint to the peer (made there if none
 * yet); a thread lane, or a window with a member outside MPI_COMM_WORLD, makes its own. */
ucp_ep_h clampi_ucx_lane_ep_peek(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    ucp_ep_h ep = __atomic_load_n(&l->eps[target], __ATOMIC_ACQUIRE);
    if (__builtin_expect(ep != NULL, 1)) return ep;
    if (u->world && !l->is_thread) {
        ep = clampi_ucx_peers_ep(&l->pw->peers, u->world[target]);
        ucp_ep_h none = NULL; /* two threads may get here: the first to store counts it */
        if (ep && __atomic_compare_exchange_n(&l->eps[target], &none, ep, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            __atomic_add_fetch(&l->held, 1, __ATOMIC_RELAXED);
        return ep;
    }
    /* a thread lane (its owner, under its mutex) or the window's own, all made at creation */
    const void *addr = u->world ? clampi_ucx_peers_address(&u->main.pw->peers, u->world[target])
                                : (const char *)u->addr_blob + u->addr_off[target];
    ep = addr ? clampi_ucx_ep_create(l->worker, addr) : NULL;
    if (ep) __atomic_store_n(&l->eps[target], ep, __ATOMIC_RELEASE);
    return ep;
}

/* Threads of a process lane may unpack the same rkey at once: the first one stored wins,
 * the others destroy theirs. */
static ucs_status_t unpack(clampi_ucx_win *u, clampi_ucx_lane *l, int target, const char *blob, const size_t *off,
                           ucp_rkey_h *out) {
    if (__atomic_load_n(out, __ATOMIC_ACQUIRE)) return UCS_OK;
    if (off[target + 1] == off[target]) return UCS_ERR_INVALID_ADDR; /* nothing registered */
    ucp_ep_h ep = clampi_ucx_lane_ep_peek(u, l, target);
    if (!ep) return UCS_ERR_UNREACHABLE;
    ucp_rkey_h mine, none = NULL;
    ucs_status_t st = ucp_ep_rkey_unpack(ep, blob + off[target], &mine);
    if (st != UCS_OK) return st;
    if (!__atomic_compare_exchange_n(out, &none, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) ucp_rkey_destroy(mine);
    return UCS_OK;
}

ucs_status_t clampi_ucx_lane_ctl(clampi_ucx_win *u, clampi_ucx_lane *l, int target, size_t field_offset,
                                 uint64_t *raddr, ucp_rkey_h *rkey) {
    ucs_status_t st = unpack(u, l, target, u->ctl_rkey_blob, u->ctl_rkey_off, &l->ctl_rkeys[target]);
    if (st != UCS_OK) return st;
    *raddr = u->peer_ctl[target] + field_offset;
    *rkey = l->ctl_rkeys[target];
    return UCS_OK;
}

/* Flush probe, worker side: while the calling thread is inside a flush call, every worker
 * that a lane flush or a lane wait touches is recorded (distinct workers), so a flush that
 * also flushed or progressed other lanes' workers shows it even if it bypassed the lanes'
 * operation counters. */
static __thread clampi_ucx_thread *probe_visiting __attribute__((tls_model("initial-exec")));

static void probe_visit_worker(ucp_worker_h w) {
    clampi_ucx_thread *me = probe_visiting;
    if (!me) return;
    for (int i = 0; i < me->visit.n; i++)
        if (me->visit.w[i] == w) return;
    if (me->visit.n < (int)(sizeof me->visit.w / sizeof me->visit.w[0]))
        me->visit.w[me->visit.n++] = w;
    else
        me->visit.overflow++;
}

void clampi_ucx_probe_begin(clampi_ucx_thread *me) {
    clampi_ucx_flush_probe *p = &me->probe;
    p->last_workers = p->last_eps = p->last_own_ops = p->last_foreign_ops = 0;
    p->flushes++;
    me->in_flush = 1;
    me->visit.n = 0, me->visit.overflow = 0;
    probe_visiting = me;
}

static uint64_t peek_pending(clampi_ucx_win *u, clampi_ucx_lane *l) {
    uint64_t n = 0;
    for (int t = 0; t < u->nranks; t++) n += __atomic_load_n(&l->pending[t], __ATOMIC_RELAXED);
    return n;
}

void clampi_ucx_probe_end(clampi_ucx_win *u, clampi_ucx_thread *me, clampi_ucx_lane *own) {
    me->in_flush = 0;
    probe_visiting = NULL;
    clampi_ucx_flush_probe *p = &me->probe;
    uint64_t nw = (uint64_t)me->visit.n + (uint64_t)me->visit.overflow, foreign = 0;
    p->workers += nw, p->last_workers = nw;
    /* Other lanes' workers it touched: their operations not taken by a lane flush (which
     * counted them already) were completed by it too; count them as foreign. */
    for (int i = 0; i < me->visit.n; i++) {
        ucp_worker_h w = me->visit.w[i];
        if (w == own->worker) continue;
        if (w == u->main.worker) {
            foreign += peek_pending(u, &u->main);
            continue;
        }
        pthread_mutex_lock(&u->threads_lock); /* then a lane's mutex: flush_everything's order */
        for (clampi_ucx_thread *th = u->threads; th; th = th->next)
            if (__atomic_load_n(&th->lane_ready, __ATOMIC_ACQUIRE) && th->lane.worker == w) {
                pthread_mutex_lock(&th->lane.mutex);
                foreign += peek_pending(u, &th->lane);
                pthread_mutex_unlock(&th->lane.mutex);
            }
        pthread_mutex_unlock(&u->threads_lock);
    }
    p->foreign_ops += foreign, p->last_foreign_ops += foreign;
}

ucs_status_t clampi_ucx_lane_wait(clampi_ucx_lane *l, void *req) {
    probe_visit_worker(l->worker);
    return clampi_ucx_wait(l->worker, req);
}

/* ---- dynamic windows: the target's region table, read with UCX gets ----------------- */
static ucs_status_t get_blocking(clampi_ucx_lane *l, ucp_ep_h ep, void *dst, size_t len, uint64_t raddr,
                                 ucp_rkey_h rkey) {
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    return clampi_ucx_lane_wait(l, ucp_get_nbx(ep, dst, len, raddr, rkey, &param));
}

/* Seqlock read of target's table: the control block's header (version, count, where the
 * table is and its rkey), the table, the version again; retried while it changes. The
 * unpacked rkey of a region the copy already had (same id) is kept: a table of n regions
 * re-read after each attach would otherwise unpack n rkeys each time. */
static ucs_status_t refresh_regions(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    clampi_ucx_dyncache *d = &l->dyn[target];
    uint64_t raddr;
    ucp_rkey_h rkey;
    ucs_status_t st = clampi_ucx_lane_ctl(u, l, target, 0, &raddr, &rkey);
    if (st != UCS_OK) return st;
    ucp_ep_h ep = clampi_ucx_lane_ep(u, l, target);
    clampi_ucx_ctl head;
    clampi_ucx_region *snap = NULL;
    uint64_t snap_cap = 0;
    const size_t head_off = offsetof(clampi_ucx_ctl, version);
    for (unsigned round = 0;; round++) {
        uint64_t v2;
        st = get_blocking(l, ep, &head.version, offsetof(clampi_ucx_ctl, mh_sub) - head_off, raddr + head_off, rkey);
        if (st != UCS_OK) break;
        int consistent = !(head.version & 1) && head.nregions <= head.table_cap &&
                         head.table_rkey_len <= CLAMPI_UCX_RKEY_MAX && (head.nregions == 0 || head.table_addr);
        if (consistent && head.nregions && head.table_addr != d->table_addr) { /* the table moved */
            if (d->table_rkey) ucp_rkey_destroy(d->table_rkey);
            d->table_rkey = NULL, d->table_addr = 0;
            if (ucp_ep_rkey_unpack(ep, head.table_rkey, &d->table_rkey) == UCS_OK)
                d->table_addr = head.table_addr;
            else
                consistent = 0, d->table_rkey = NULL;
        }
        if (consistent && head.nregions > snap_cap) {
            clampi_ucx_region *grown = realloc(snap, sizeof *snap * head.nregions);
            if (!grown) {
                st = UCS_ERR_NO_MEMORY;
                break;
            }
            snap = grown, snap_cap = head.nregions;
        }
        if (consistent && head.nregions)
            st = get_blocking(l, ep, snap, sizeof *snap * head.nregions, head.table_addr, d->table_rkey);
        if (st == UCS_OK) st = get_blocking(l, ep, &v2, sizeof v2, raddr + head_off, rkey);
        if (st != UCS_OK) break;
        if (consistent && v2 == head.version) break;
        clampi_ucx_backoff(l, &round);
    }
    if (st == UCS_OK && head.nregions > (uint64_t)d->cap) {
        struct clampi_ucx_dynregion *r = realloc(d->r, sizeof *r * head.nregions);
        if (!r)
            st = UCS_ERR_NO_MEMORY;
        else
            d->r = r, d->cap = (int)head.nregions;
    }
    if (st == UCS_OK) {
        /* keep the rkeys of regions still there: same id, usually at the same index
         * (attach appends, detach moves the last entry into the hole) */
        int old_n = d->n;
        struct clampi_ucx_dynregion *old = old_n ? malloc(sizeof *old * (size_t)old_n) : NULL;
        if (old_n && !old) {
            st = UCS_ERR_NO_MEMORY;
        } else {
            if (old_n) memcpy(old, d->r, sizeof *old * (size_t)old_n);
            d->n = 0;
            for (uint64_t i = 0; i < head.nregions; i++) {
                struct clampi_ucx_dynregion *e = &d->r[d->n];
                e->base = snap[i].base, e->size = snap[i].size, e->id = snap[i].id, e->rkey = NULL;
                int k = i < (uint64_t)old_n && old[i].id == e->id ? (int)i : -1;
                for (int j = 0; k < 0 && j < old_n; j++)
                    if (old[j].rkey && old[j].id == e->id) k = j;
                if (k >= 0) {
                    e->rkey = old[k].rkey;
                    old[k].rkey = NULL;
                } else if (snap[i].rkey_len > CLAMPI_UCX_RKEY_MAX ||
                           ucp_ep_rkey_unpack(ep, snap[i].rkey, &e->rkey) != UCS_OK) {
                    continue;
                }
                d->n++;
            }
            for (int j = 0; j < old_n; j++)
                if (old[j].rkey) ucp_rkey_destroy(old[j].rkey);
            free(old);
            d->version = head.version;
            d->check = 0;
        }
    }
    free(snap);
    return st;
}

/* At a new epoch the cached table may be stale: one 8-byte get of the version first. */
static ucs_status_t check_version(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    clampi_ucx_dyncache *d = &l->dyn[target];
    uint64_t raddr, v;
    ucp_rkey_h rkey;
    ucs_status_t st = clampi_ucx_lane_ctl(u, l, target, offsetof(clampi_ucx_ctl, version), &raddr, &rkey);
    if (st == UCS_OK) st = get_blocking(l, clampi_ucx_lane_ep(u, l, target), &v, sizeof v, raddr, rkey);
    if (st != UCS_OK) return st;
    if (v == d->version) {
        d->check = 0;
        return UCS_OK;
    }
    return refresh_regions(u, l, target);
}

/* The region holding addr, or -1; *part: the bytes of [addr, addr + len) it holds. */
static int find_region(const clampi_ucx_dyncache *d, uint64_t addr, uint64_t len, uint64_t *part) {
    for (int i = 0; i < d->n; i++)
        if (addr >= d->r[i].base && addr - d->r[i].base < d->r[i].size) {
            uint64_t room = d->r[i].size - (addr - d->r[i].base);
            *part = len < room ? len : room;
            return i;
        }
    return -1;
}

static ucs_status_t dyn_remote(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t addr, uint64_t len,
                               uint64_t *raddr, ucp_rkey_h *rkey, uint64_t *part) {
    /* The process lane is shared by threads: its tables change under its mutex. */
    if (!l->is_thread && u->mt) pthread_mutex_lock(&l->mutex);
    clampi_ucx_dyncache *d = &l->dyn[target];
    ucs_status_t st = UCS_OK;
    if (d->check) st = check_version(u, l, target);
    int i = st == UCS_OK ? find_region(d, addr, len, part) : -1;
    if (st == UCS_OK && i < 0) { /* not in our copy: the target may have attached it since */
        st = refresh_regions(u, l, target);
        if (st == UCS_OK) i = find_region(d, addr, len, part);
    }
    if (st == UCS_OK && i < 0) st = UCS_ERR_INVALID_ADDR;
    if (st == UCS_OK) {
        *raddr = addr;
        *rkey = d->r[i].rkey;
    }
    if (!l->is_thread && u->mt) pthread_mutex_unlock(&l->mutex);
    return st;
}

ucs_status_t clampi_ucx_lane_remote_part(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t offset,
                                         uint64_t len, uint64_t *raddr, ucp_rkey_h *rkey, uint64_t *part) {
    if (u->dynamic) return dyn_remote(u, l, target, offset, len, raddr, rkey, part);
    if (__builtin_expect(l->rkeys[target] == NULL, 0)) {
        ucs_status_t st = unpack(u, l, target, u->rkey_blob, u->rkey_off, &l->rkeys[target]);
        if (st != UCS_OK) return st;
    }
    *raddr = u->peer_base[target] + offset;
    *rkey = l->rkeys[target];
    *part = len;
    return UCS_OK;
}

ucs_status_t clampi_ucx_lane_remote(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t offset, uint64_t len,
                                    uint64_t *raddr, ucp_rkey_h *rkey) {
    uint64_t part;
    ucs_status_t st = clampi_ucx_lane_remote_part(u, l, target, offset, len, raddr, rkey, &part);
    return st == UCS_OK && part < len ? UCS_ERR_INVALID_ADDR : st;
}

ucs_status_t clampi_ucx_lane_covered(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t offset, uint64_t len) {
    uint64_t raddr, part;
    ucp_rkey_h rkey;
    for (;;) {
        ucs_status_t st = clampi_ucx_lane_remote_part(u, l, target, offset, len, &raddr, &rkey, &part);
        if (st != UCS_OK || part == len) return st;
        offset += part, len -= part;
    }
}

void clampi_ucx_dyn_epoch(clampi_ucx_win *u) {
    if (!u->dynamic) return;
    /* Only the process lane and the calling thread's lane are safe to touch here; other
     * threads' lanes are marked under their mutex. */
    if (u->mt) pthread_mutex_lock(&u->main.mutex);
    for (int t = 0; t < u->nranks; t++) u->main.dyn[t].check = 1;
    if (u->mt) pthread_mutex_unlock(&u->main.mutex);
    pthread_mutex_lock(&u->threads_lock);
    for (clampi_ucx_thread *th = u->threads; th; th = th->next) {
        if (!__atomic_load_n(&th->lane_ready, __ATOMIC_ACQUIRE)) continue;
        pthread_mutex_lock(&th->lane.mutex);
        for (int t = 0; t < u->nranks; t++) th->lane.dyn[t].check = 1;
        pthread_mutex_unlock(&th->lane.mutex);
    }
    pthread_mutex_unlock(&u->threads_lock);
}

ucs_status_t clampi_ucx_lane_settle(clampi_ucx_lane *l, ucp_ep_h ep, int target) {
    /* a clean mark while another thread's flush of this lane runs may be one it cleared
     * before completing the operation: wait for it too (as clampi_ucx_lane_flush does) */
    if (!__atomic_load_n(&l->dirty[target], __ATOMIC_SEQ_CST) && __atomic_load_n(&l->flushing, __ATOMIC_SEQ_CST) == 0)
        return UCS_OK;
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    return clampi_ucx_lane_wait(l, ucp_ep_flush_nbx(ep, &param));
}

/* A thread streaming operations into the process worker keeps the progress service off it
 * (its puts and the service's passes took turns on the worker's spinlock: an origin over
 * TCP, whose every emulated put comes back acknowledged and wakes the service, spent 22 %
 * of its time in that lock and 5-12 us per 8-byte put) and drives the worker itself once
 * every this many operations, so that acknowledgements and operations other processes
 * aim at this one are still applied while it streams. A power of two. */
#define CLAMPI_UCX_ISSUE_PROGRESS_EVERY 16

/* (ucx_win.h) */
void clampi_ucx_lane_issued(clampi_ucx_lane *l, uint64_t nth) {
    if (!l->poller) return; /* a thread lane: the service takes its mutex, held while issuing */
    if (__atomic_load_n(&l->poller->service_busy, __ATOMIC_RELAXED))
        __atomic_fetch_add(&l->u->counters.issued_beside_service, 1, __ATOMIC_RELAXED);
    clampi_ucx_poller_note(l->poller);
    if ((nth & (CLAMPI_UCX_ISSUE_PROGRESS_EVERY - 1)) == 0) clampi_ucx_poller_progress(l->poller, l->worker);
}

void clampi_ucx_lane_count(clampi_ucx_lane *l, int target) {
    clampi_ucx_lane_mark(l, target); /* after issuing: see clampi_ucx_lane_ep */
    clampi_ucx_lane_tally(l, target);
    clampi_ucx_lane_issued(l, __atomic_load_n(&l->pending[target], __ATOMIC_RELAXED));
}

void clampi_ucx_lane_tally(clampi_ucx_lane *l, int target) {
    clampi_ucx_thread *t = clampi_ucx_thread_current(l->u); /* one lookup for both counts */
    if (t) t->stats.ops++;
    if (l->is_thread) {
        l->pending[target]++;
        return;
    }
    __atomic_fetch_add(&l->pending[target], 1, __ATOMIC_RELAXED);
    if (t) __atomic_fetch_add(&t->main_own[target], 1, __ATOMIC_RELAXED); /* whose it is (flush probe) */
}

/* Flush probe of the calling thread (me, inside a flush call): lane l was flushed to
 * target (< 0: all), driving n operations. */
static void probe_account(clampi_ucx_win *u, clampi_ucx_thread *me, clampi_ucx_lane *l, int target, uint64_t n) {
    uint64_t own = 0, eps = 0;
    int lo = target < 0 ? 0 : target, hi = target < 0 ? u->nranks : target + 1;
    for (int t = lo; t < hi; t++) eps += clampi_ucx_lane_ep_if_any(l, t) != NULL;
    if (l->is_thread) {
        own = l == &me->lane ? n : 0;
    } else {
        for (int t = lo; t < hi; t++)
            if (__atomic_load_n(&me->main_own[t], __ATOMIC_RELAXED))
                own += __atomic_exchange_n(&me->main_own[t], 0, __ATOMIC_RELAXED);
        if (own > n) own = n;
    }
    clampi_ucx_flush_probe *p = &me->probe;
    p->eps += eps, p->last_eps += eps;
    p->own_ops += own, p->last_own_ops += own;
    p->foreign_ops += n - own, p->last_foreign_ops += n - own;
}

static uint64_t take_pending(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    uint64_t n = 0;
    int lo = target < 0 ? 0 : target, hi = target < 0 ? u->nranks : target + 1;
    for (int t = lo; t < hi; t++) /* a locked exchange only where there is something to take */
        if (__atomic_load_n(&l->pending[t], __ATOMIC_RELAXED))
            n += __atomic_exchange_n(&l->pending[t], 0, __ATOMIC_RELAXED);
    return n;
}

/* Whether anything went to UCX for target (< 0: any target) since the lane's last flush of
 * it began (plain loads: a clean target costs no locked instruction). */
static int is_dirty(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    if (target >= 0) return __atomic_load_n(&l->dirty[target], __ATOMIC_SEQ_CST);
    for (int t = 0; t < u->nranks; t++)
        if (__atomic_load_n(&l->dirty[t], __ATOMIC_SEQ_CST)) return 1;
    return 0;
}

/* Clears the marks a flush is about to cover. */
static void take_dirty(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    int lo = target < 0 ? 0 : target, hi = target < 0 ? u->nranks : target + 1;
    for (int t = lo; t < hi; t++)
        if (__atomic_load_n(&l->dirty[t], __ATOMIC_RELAXED)) __atomic_exchange_n(&l->dirty[t], 0, __ATOMIC_SEQ_CST);
}

static void mark_dirty(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    int lo = target < 0 ? 0 : target, hi = target < 0 ? u->nranks : target + 1;
    for (int t = lo; t < hi; t++)
        if (clampi_ucx_lane_ep_if_any(l, t)) __atomic_store_n(&l->dirty[t], 1, __ATOMIC_RELAXED);
}

/* flush_all on the process lane while other UCX windows use its worker too
 * (process_worker.h): a worker flush would wait for their operations too and walk their
 * endpoints. Instead, the endpoints of this window marked dirty (each mark cleared just
 * before its flush, as take_dirty does), and every endpoint while another flush of the lane
 * is under way (it may have cleared marks of operations it has not completed yet). The
 * flushes are issued together, then waited for. */
static ucs_status_t wait_all(clampi_ucx_lane *l, void **reqs, int n, ucs_status_t st) {
    for (int i = 0; i < n; i++) {
        ucs_status_t s = clampi_ucx_lane_wait(l, reqs[i]);
        if (st == UCS_OK) st = s;
    }
    return st;
}

static ucs_status_t flush_window_eps(clampi_ucx_win *u, clampi_ucx_lane *l) {
    enum { BATCH = 64 };
    void *reqs[BATCH];
    int n = 0;
    ucs_status_t st = UCS_OK;
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    for (int t = 0; t < u->nranks; t++) {
        ucp_ep_h ep = clampi_ucx_lane_ep_if_any(l, t);
        if (!ep) continue;
        /* a clean mark may have been cleared by a flush that began after this one: it
         * incremented `flushing` before clearing, so that shows then */
        if (__atomic_load_n(&l->dirty[t], __ATOMIC_SEQ_CST))
            __atomic_exchange_n(&l->dirty[t], 0, __ATOMIC_SEQ_CST);
        else if (__atomic_load_n(&l->flushing, __ATOMIC_SEQ_CST) < 2)
            continue;
        void *r = ucp_ep_flush_nbx(ep, &param);
        if (UCS_PTR_IS_ERR(r)) {
            if (st == UCS_OK) st = UCS_PTR_STATUS(r);
        } else if (r) {
            reqs[n++] = r;
        }
        if (n == BATCH) st = wait_all(l, reqs, n, st), n = 0;
    }
    return wait_all(l, reqs, n, st);
}

ucs_status_t clampi_ucx_lane_flush(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t *driven) {
    uint64_t n = take_pending(u, l, target);
    if (driven) *driven = n;
    clampi_ucx_thread *me = probe_visiting; /* inside a probed flush call (probe_begin) */
    if (me && me->in_flush) probe_account(u, me, l, target, n);
    probe_visit_worker(l->worker);
    ucp_ep_h ep = target >= 0 ? clampi_ucx_lane_ep_if_any(l, target) : NULL;
    if (target >= 0 && !ep) return UCS_OK; /* never used: nothing to complete */
    /* Nothing handed to UCX since the last flush (CPU atomics complete in their call): no
     * UCX flush, which costs several hundred instructions even on an idle endpoint. Unless
     * another flush of this lane is still waiting: it cleared the marks of operations it
     * has not completed yet (a shared process lane under MPI_THREAD_MULTIPLE), and this
     * caller's own may be among them, so it waits for them itself. (Through the CMPI/MPI
     * calls the window layer already serializes a process-scope window's flushes under
     * MPI_THREAD_MULTIPLE, and thread lanes are flushed under their mutex; this keeps the
     * lane correct without relying on either.) Skipping costs loads only; a flush that asks
     * UCX counts itself in `flushing` before clearing marks. */
    if (!is_dirty(u, l, target) && __atomic_load_n(&l->flushing, __ATOMIC_SEQ_CST) == 0) return UCS_OK;
    __atomic_fetch_add(&l->flushing, 1, __ATOMIC_SEQ_CST);
    /* flush_all of a process lane whose worker other windows use too, or that has endpoints
     * this window does not hold (made for windows freed since, or other communicators): its
     * own endpoints (flush_window_eps takes their marks itself); else the worker or the one
     * endpoint */
    int own_eps =
        target < 0 && !l->is_thread &&
        (__atomic_load_n(&l->pw->users, __ATOMIC_RELAXED) > 1 ||
         clampi_ucx_peers_made(&l->pw->peers) != (u->world ? __atomic_load_n(&l->held, __ATOMIC_RELAXED) : 0));
    if (!own_eps) take_dirty(u, l, target);
    __atomic_fetch_add(&u->counters.ucx_flushes, 1, __ATOMIC_RELAXED);
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    ucs_status_t st;
    if (own_eps)
        st = flush_window_eps(u, l);
    else
        st = clampi_ucx_lane_wait(l,
                                  target >= 0 ? ucp_ep_flush_nbx(ep, &param) : ucp_worker_flush_nbx(l->worker, &param));
    if (st != UCS_OK) mark_dirty(u, l, target); /* not flushed: the next flush tries again */
    __atomic_fetch_sub(&l->flushing, 1, __ATOMIC_SEQ_CST);
    return st;
}

ucs_status_t clampi_ucx_flush_everything(clampi_ucx_win *u, int target) {
    ucs_status_t st = clampi_ucx_lane_flush(u, &u->main, target, NULL);
    pthread_mutex_lock(&u->threads_lock);
    for (clampi_ucx_thread *th = u->threads; th; th = th->next) {
        if (!__atomic_load_n(&th->lane_ready, __ATOMIC_ACQUIRE)) continue;
        pthread_mutex_lock(&th->lane.mutex);
        ucs_status_t s = clampi_ucx_lane_flush(u, &th->lane, target, NULL);
        pthread_mutex_unlock(&th->lane.mutex);
        if (st == UCS_OK) st = s;
    }
    pthread_mutex_unlock(&u->threads_lock);
    return st;
}

/* While we wait for a lock, the holder may be waiting for us inside MPI (a raw MPI window,
 * or another clampi window on the MPI backend, whose MPI needs our progress, e.g. Open MPI's
 * osc/pt2pt lock grants): so MPI is poked too. The wait policy (common/wait.h) with a
 * growing spin: 1, 2, 4 ... 64 polls a round, a yield every round from the fifth on (a lock
 * is held across the holder's epoch, so the wait is long or over soon). */
void clampi_ucx_backoff(clampi_ucx_lane *l, unsigned *round) {
    unsigned spins = 1u << (*round < 6 ? *round : 6);
    for (unsigned i = 0; i < spins; i++) clampi_ucx_poller_progress(l->poller, l->worker);
    if (*round >= 4) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        clampi_wait_pause(round, 0);
    } else {
        (*round)++;
    }
}

void clampi_ucx_thread_stats(clampi_bwin *w, CMPIX_Win_thread_stats *stats) {
    clampi_ucx_thread *t = clampi_ucx_thread_current(clampi_ucx_of(w));
    if (t)
        *stats = t->stats;
    else
        memset(stats, 0, sizeof *stats);
}

void clampi_ucx_counters_of(const clampi_bwin *b, clampi_ucx_counters *out) {
    const clampi_ucx_win *u = clampi_ucx_of(b);
    out->put_copies = __atomic_load_n(&u->counters.put_copies, __ATOMIC_RELAXED);
    out->put_waits = __atomic_load_n(&u->counters.put_waits, __ATOMIC_RELAXED);
    out->serviced = __atomic_load_n(&u->main.poller->serviced, __ATOMIC_RELAXED);
    out->takeovers = __atomic_load_n(&u->main.poller->takeovers, __ATOMIC_RELAXED);
    out->cpu_amos = __atomic_load_n(&u->counters.cpu_amos, __ATOMIC_RELAXED);
    out->direct_ops = __atomic_load_n(&u->counters.direct_ops, __ATOMIC_RELAXED);
    out->ucx_flushes = __atomic_load_n(&u->counters.ucx_flushes, __ATOMIC_RELAXED);
    out->issued_beside_service = __atomic_load_n(&u->counters.issued_beside_service, __ATOMIC_RELAXED);
}

void clampi_ucx_flush_probe_of(const clampi_bwin *b, clampi_ucx_flush_probe *out) {
    clampi_ucx_thread *t = clampi_ucx_thread_current(clampi_ucx_of(b));
    if (t)
        *out = t->probe;
    else
        memset(out, 0, sizeof *out);
}
