/* CMPI_Get, and clampi_win_get / clampi_win_rget for the preload's MPI_Get / MPI_Rget:
 * the cache's front door.
 *
 * In order: same-node target with shared memory -> direct copy; bytes cached -> copy
 * from the cache; bytes inside a get still in flight -> copied from it at flush (no
 * second network get); otherwise MPI_Get into the user's buffer, remembered so the
 * flush that completes it can enter the bytes in the cache. */
#include <string.h>

#include "backends/access.h"
#include "rma/window.h"
#include "rma/errors.h"

/* memcpy with the common small sizes inlined (the hit path of small gets). */
static inline void copy_bytes(unsigned char *dst, const void *src, uint64_t n) {
    switch (n) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, n);
    }
}

static int network_get(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_type, int target,
                       MPI_Aint disp, int target_count, MPI_Datatype target_type, uint64_t bytes) {
    int rc = w->b.ops->get(&w->b, origin_addr, origin_count, origin_type, target, disp, target_count, target_type);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_mark_outstanding(w, target);
    CLAMPI_WIN_COUNT(w, bytes_fetched, bytes);
    return MPI_SUCCESS;
}

static int network_rget(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_type, int target,
                        MPI_Aint disp, int target_count, MPI_Datatype target_type, uint64_t bytes, MPI_Request *rreq) {
    int rc =
        w->b.ops->rget(&w->b, origin_addr, origin_count, origin_type, target, disp, target_count, target_type, rreq);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_mark_outstanding(w, target);
    CLAMPI_WIN_COUNT(w, bytes_fetched, bytes);
    return MPI_SUCCESS;
}

/* The whole get under the window lock. rreq != NULL: MPI_Rget (never joins a get in
 * flight nor enters the cache: the program may reuse its buffer as soon as the request
 * completes, before the flush that would fill the cache). */
static inline __attribute__((always_inline)) int
get_locked(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Request *rreq, int *served) {
    clampi_access a;
    int err = clampi_access_check(&w->b, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                  target_datatype, &a);
    if (__builtin_expect(err >= 0, 0)) return CLAMPI_ARG_ERROR(err);
    const uint64_t bytes = a.target.bytes;
    *served = 1;
    if (bytes == 0 && !rreq) {
        CLAMPI_WIN_COUNT(w, gets, 1);
        return MPI_SUCCESS;
    }
    unsigned char *dst = (unsigned char *)origin_addr + a.origin.lo;
    const int contiguous = a.origin.contiguous && a.target.contiguous;

    if (bytes && w->target_shm && w->target_shm[target_rank] && contiguous) {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        copy_bytes(dst, w->target_shm[target_rank] + a.offset, bytes);
        CLAMPI_WIN_COUNT(w, gets, 1);
        CLAMPI_WIN_COUNT(w, direct, 1);
        return MPI_SUCCESS;
    }
    *served = 0;
    if (!a.target.contiguous || w->opts.mode == CLAMPI_MODE_OFF || !bytes) {
        CLAMPI_WIN_COUNT(w, gets, 1);
        CLAMPI_WIN_COUNT(w, bypassed, 1);
        return rreq ? network_rget(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                   target_count, target_datatype, bytes, rreq)
                    : network_get(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                  target_datatype, bytes);
    }
    w->n.gets++; /* from here on caching modes only: never a thread-scope window */
    if (w->caches_data) {
        const void *cached = clampi_cache_lookup(&w->cache, (uint32_t)target_rank, a.offset, bytes);
        if (cached) {
            if (a.origin.contiguous) {
                copy_bytes(dst, cached, bytes);
            } else { /* scatter the cached bytes into the origin layout */
                int pos = 0;
                MPI_Unpack(cached, (int)bytes, &pos, origin_addr, origin_count, origin_datatype, MPI_COMM_SELF);
            }
            w->n.bytes_saved += bytes;
            *served = 1;
            return MPI_SUCCESS;
        }
    }
    if (__builtin_expect(rreq != NULL, 0)) {
        w->n.misses++;
        return network_rget(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, bytes, rreq);
    }
    if (!a.origin.contiguous) {
        CLAMPI_WIN_COUNT(w, bypassed, 1);
        return network_get(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                           target_datatype, bytes);
    }
    uint32_t source = clampi_inflight_find(&w->inflight, (uint32_t)target_rank, a.offset, bytes);
    if (source != CLAMPI_INFLIGHT_NONE && clampi_inflight_add_copy(&w->inflight, source, a.offset, bytes, dst) == 0) {
        w->n.inflight_hits++;
        w->n.bytes_saved += bytes;
        return MPI_SUCCESS;
    }
    int rc = network_get(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, bytes);
    if (rc != MPI_SUCCESS) return rc;
    w->n.misses++;
    int cacheable = w->caches_data && clampi_cache_usable(&w->cache) && bytes <= clampi_cache_max_entry(&w->cache);
    if (!cacheable && w->caches_data && clampi_cache_usable(&w->cache)) clampi_cache_note_too_large(&w->cache, bytes);
    clampi_inflight_add_fill(&w->inflight, (uint32_t)target_rank, a.offset, bytes, dst, cacheable);
    if (cacheable) clampi_cache_prepare(&w->cache, bytes); /* faults now: overlap the get where it has left */
    return MPI_SUCCESS;
}

int clampi_win_get(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_type, int target,
                   MPI_Aint disp, int target_count, MPI_Datatype target_type) {
    int served;
    clampi_win_enter(w);
    int rc =
        get_locked(w, origin_addr, origin_count, origin_type, target, disp, target_count, target_type, NULL, &served);
    clampi_win_leave(w);
    return rc;
}

int clampi_win_rget(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_type, int target,
                    MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Request *rreq, int *served) {
    clampi_win_enter(w);
    int rc =
        get_locked(w, origin_addr, origin_count, origin_type, target, disp, target_count, target_type, rreq, served);
    clampi_win_leave(w);
    return rc;
}

int CMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, CMPI_Win win) {
    clampi_win *w = clampi_registry_find(win);
    if (__builtin_expect(!w, 0)) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
    int served;
    clampi_win_enter(w);
    int rc = get_locked(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                        target_datatype, NULL, &served);
    clampi_win_leave(w);
    if (__builtin_expect(rc < 0, 0)) return clampi_raise_win(w, CLAMPI_ARG_ERROR_CODE(rc));
    return rc;
}
