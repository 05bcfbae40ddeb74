/* Internal state of a clampi window (one per CMPI_Win, per rank). */
#ifndef CLAMPI_RMA_WINDOW_H
#define CLAMPI_RMA_WINDOW_H
#include <mpi.h>
#include <stdint.h>

#include "cache/adapt.h"
#include "cache/cache.h"
#include "cache/inflight.h"
#include "clampi/rma.h"
#include "rma/options.h"

/* Counters kept by the MPI-facing layer; the engine keeps its own (cache.c). Both are
 * merged into CMPI_Win_stats in stats.c. */
typedef struct clampi_win_counters {
    uint64_t gets, inflight_hits, misses, bypassed, direct;
    uint64_t bytes_saved, bytes_fetched;
    uint64_t flushes, flushes_elided, puts;
} clampi_win_counters;

typedef struct clampi_win {
    MPI_Win win;              /* the user's window (CMPI_Win.win) */
    MPI_Win shm_win;          /* node-shared allocation behind win, or MPI_WIN_NULL */
    uint32_t serial;          /* matches CMPI_Win.serial while the window lives */
    int rank, nranks;
    clampi_win_options opts;
    int caches_data;          /* mode keeps completed gets (always-cache, user-defined) */

    MPI_Aint *target_size;    /* per target: window bytes */
    int *target_disp_unit;    /* per target: displacement unit */
    unsigned char **target_shm; /* per target: base for load/store, or NULL (whole array NULL if none) */

    uint32_t *outstanding;    /* per target: MPI operations issued since its last completion */
    uint32_t *dirty_targets;  /* targets with outstanding > 0 */
    uint32_t ndirty;

    clampi_cache cache;
    clampi_adapt adapt;       /* sizing policy state (used when opts.adaptive) */
    clampi_inflight inflight;
    clampi_win_counters n;
} clampi_win;

/* The registry: CMPI_Win handle -> state; NULL for null, freed or foreign handles.
 * Inline: it is on every call's path. */
#define CLAMPI_REGISTRY_CHUNK_BITS 8
#define CLAMPI_REGISTRY_MAX_CHUNKS 1024 /* 262144 windows alive at once */
extern clampi_win **clampi_registry_chunks[CLAMPI_REGISTRY_MAX_CHUNKS];
static inline clampi_win *clampi_registry_find(CMPI_Win h) {
    uint32_t chunk = h.slot >> CLAMPI_REGISTRY_CHUNK_BITS;
    if (h.serial == 0 || chunk >= CLAMPI_REGISTRY_MAX_CHUNKS || !clampi_registry_chunks[chunk]) return NULL;
    clampi_win *w = clampi_registry_chunks[chunk][h.slot & ((1u << CLAMPI_REGISTRY_CHUNK_BITS) - 1)];
    return (w && w->serial == h.serial && w->win == h.win) ? w : NULL;
}
/* Registers w; fills h. Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
int clampi_registry_add(clampi_win *w, CMPI_Win *h);
void clampi_registry_remove(CMPI_Win h);

/* An MPI operation to target was issued (flush elision bookkeeping). */
static inline void clampi_win_mark_outstanding(clampi_win *w, int target) {
    if (w->outstanding[target]++ == 0) w->dirty_targets[w->ndirty++] = (uint32_t)target;
}
#endif
