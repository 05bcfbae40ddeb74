/* Window creation and destruction: CMPI_Win_create, CMPI_Win_allocate, CMPI_Win_free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma/errors.h"
#include "rma/stats.h"
#include "rma/window.h"

static void release(clampi_win *w) {
    clampi_cache_destroy(&w->cache);
    clampi_inflight_destroy(&w->inflight);
    free(w->target_size);
    free(w->target_disp_unit);
    free(w->target_shm);
    free(w->outstanding);
    free(w->dirty_targets);
    free(w);
}

/* Everyone agrees on a flag (logical AND over comm). */
static int all_agree(MPI_Comm comm, int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

/* Collective part common to both creation calls: options are read and agreed on
 * before any window exists, so a bad value anywhere fails everywhere, cleanly. */
static int read_options(MPI_Info info, MPI_Comm comm, clampi_win_options *opts) {
    const char *bad_key = NULL;
    int local = clampi_options_read(info, opts, &bad_key) == MPI_SUCCESS;
    if (!local) fprintf(stderr, "clampi: invalid value for %s\n", bad_key);
    return all_agree(comm, local);
}

static int check_comm_args(MPI_Comm comm, MPI_Aint size, int disp_unit, const void *out_handle) {
    if (comm == MPI_COMM_NULL) return clampi_raise_nowin(CLAMPI_E_ARG);
    if (!out_handle || size < 0 || disp_unit <= 0) return clampi_raise_comm(comm, CLAMPI_E_ARG);
    return MPI_SUCCESS;
}

/* Builds the clampi state for an existing MPI window (collective over comm). */
static int attach_state(MPI_Win mpi_win, MPI_Win shm_win, MPI_Comm comm, MPI_Aint size, int disp_unit,
                        const clampi_win_options *opts, CMPI_Win *handle) {
    clampi_win *w = calloc(1, sizeof *w);
    int ok = w != NULL;
    if (w) {
        w->win = mpi_win;
        w->shm_win = shm_win;
        w->opts = *opts;
        w->caches_data = opts->mode == CLAMPI_MODE_ALWAYS || opts->mode == CLAMPI_MODE_USER;
        MPI_Comm_rank(comm, &w->rank);
        MPI_Comm_size(comm, &w->nranks);
        w->target_size = malloc(w->nranks * sizeof *w->target_size);
        w->target_disp_unit = malloc(w->nranks * sizeof *w->target_disp_unit);
        w->outstanding = calloc(w->nranks, sizeof *w->outstanding);
        w->dirty_targets = malloc(w->nranks * sizeof *w->dirty_targets);
        ok = w->target_size && w->target_disp_unit && w->outstanding && w->dirty_targets &&
             clampi_inflight_init(&w->inflight, (uint32_t)w->nranks) == 0;
    }
    /* Agree first: the allgathers below are collective and must run on every rank. */
    if (!all_agree(comm, ok)) {
        if (w) release(w);
        return MPI_ERR_NO_MEM;
    }
    MPI_Aint my_size = size;
    MPI_Allgather(&my_size, 1, MPI_AINT, w->target_size, 1, MPI_AINT, comm);
    MPI_Allgather(&disp_unit, 1, MPI_INT, w->target_disp_unit, 1, MPI_INT, comm);
    if (w->caches_data && clampi_cache_init(&w->cache, opts->index_entries, opts->buffer_bytes) != CLAMPI_CACHE_OK) {
        static int warned;
        if (!warned++)
            fprintf(stderr, "clampi: rank %d: cannot allocate a %zu-byte cache with %zu index entries; "
                    "the window works uncached\n", w->rank, opts->buffer_bytes, opts->index_entries);
    }
    clampi_adapt_init(&w->adapt, NULL, &w->cache);
    if (shm_win != MPI_WIN_NULL) {
        /* Same-node ranks' memory can be read directly: map their bases. */
        MPI_Group g_comm, g_node;
        MPI_Win_get_group(shm_win, &g_node);
        MPI_Comm_group(comm, &g_comm);
        int nnode;
        MPI_Group_size(g_node, &nnode);
        w->target_shm = calloc(w->nranks, sizeof *w->target_shm);
        int *node_ranks = malloc(nnode * sizeof *node_ranks), *comm_ranks = malloc(nnode * sizeof *comm_ranks);
        if (w->target_shm && node_ranks && comm_ranks) {
            for (int i = 0; i < nnode; i++) node_ranks[i] = i;
            MPI_Group_translate_ranks(g_node, nnode, node_ranks, g_comm, comm_ranks);
            for (int i = 0; i < nnode; i++) {
                MPI_Aint sz;
                int du;
                void *base = NULL;
                if (MPI_Win_shared_query(shm_win, i, &sz, &du, &base) == MPI_SUCCESS && comm_ranks[i] >= 0)
                    w->target_shm[comm_ranks[i]] = base ? base : (void *)w->target_shm; /* non-NULL even for 0 bytes */
            }
        } else {
            free(w->target_shm);
            w->target_shm = NULL;
        }
        free(node_ranks);
        free(comm_ranks);
        MPI_Group_free(&g_comm);
        MPI_Group_free(&g_node);
    }
    int rc = clampi_registry_add(w, handle);
    if (rc != MPI_SUCCESS) {
        release(w);
        return rc;
    }
    return MPI_SUCCESS;
}

int CMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, CMPI_Win *win) {
    int rc = check_comm_args(comm, size, disp_unit, win);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_options opts;
    if (!read_options(info, comm, &opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    MPI_Win mpi_win;
    rc = MPI_Win_create(base, size, disp_unit, info, comm, &mpi_win);
    if (rc != MPI_SUCCESS) return rc;
    rc = attach_state(mpi_win, MPI_WIN_NULL, comm, size, disp_unit, &opts, win);
    if (rc != MPI_SUCCESS) {
        MPI_Win_free(&mpi_win);
        return clampi_raise_comm(comm, CLAMPI_E_NOMEM);
    }
    return MPI_SUCCESS;
}

/* Tries to put the window's memory in node-shared memory: returns 1 with *mpi_win (over
 * comm) and *shm_win set, or 0 (everyone then falls back to MPI_Win_allocate). When all
 * of comm is on one node the shared window is the user's window itself. */
static int allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void **base,
                           MPI_Win *mpi_win, MPI_Win *shm_win) {
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 0;
    int nnode, ncomm;
    MPI_Comm_size(node, &nnode);
    MPI_Comm_size(comm, &ncomm);
    int one_node = all_agree(comm, nnode == ncomm);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    /* Some MPI configurations cannot allocate shared windows (e.g. Open MPI with only
     * the osc pt2pt component): that is not an error, just no shortcut. */
    int ok = MPI_Win_allocate_shared(size, disp_unit, info, node, base, shm_win) == MPI_SUCCESS;
    MPI_Comm_free(&node);
    if (!all_agree(comm, ok)) {
        if (ok) MPI_Win_free(shm_win);
        return 0;
    }
    if (one_node) {
        /* The shared window spans comm already (same group, same order: split_type
         * keeps comm's order with key 0). */
        *mpi_win = *shm_win;
        return 1;
    }
    ok = MPI_Win_create(*base, size, disp_unit, info, comm, mpi_win) == MPI_SUCCESS;
    if (!all_agree(comm, ok)) {
        if (ok) MPI_Win_free(mpi_win);
        MPI_Win_free(shm_win);
        return 0;
    }
    return 1;
}

int CMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, CMPI_Win *win) {
    int rc = check_comm_args(comm, size, disp_unit, win);
    if (rc == MPI_SUCCESS && !baseptr) rc = clampi_raise_comm(comm, CLAMPI_E_ARG);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_options opts;
    if (!read_options(info, comm, &opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    MPI_Win mpi_win = MPI_WIN_NULL, shm_win = MPI_WIN_NULL;
    void *base = NULL;
    if (!(opts.shm_direct && allocate_shared(size, disp_unit, info, comm, &base, &mpi_win, &shm_win))) {
        /* Rounded up: MPICH 4.0's MPI_Win_allocate misplaces the targets that follow a
         * rank whose size is not a multiple of 16 (gets read the wrong bytes). */
        rc = MPI_Win_allocate((size + 63) & ~(MPI_Aint)63, disp_unit, info, comm, &base, &mpi_win);
        if (rc != MPI_SUCCESS) return rc;
    }
    rc = attach_state(mpi_win, shm_win, comm, size, disp_unit, &opts, win);
    if (rc != MPI_SUCCESS) {
        MPI_Win_free(&mpi_win);
        if (shm_win != MPI_WIN_NULL && shm_win != mpi_win) MPI_Win_free(&shm_win);
        return clampi_raise_comm(comm, CLAMPI_E_NOMEM);
    }
    *(void **)baseptr = base;
    return MPI_SUCCESS;
}

int CMPI_Win_free(CMPI_Win *win) {
    clampi_win *w = win ? clampi_registry_find(*win) : NULL;
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (clampi_options_stats_enabled()) clampi_stats_print(w);
    MPI_Win shm = w->shm_win;
    MPI_Win mpi_win = w->win;
    int rc = MPI_Win_free(&mpi_win);
    if (rc != MPI_SUCCESS) return rc; /* the window stays usable */
    if (shm != MPI_WIN_NULL && shm != w->win) MPI_Win_free(&shm);
    clampi_registry_remove(*win);
    release(w);
    win->win = MPI_WIN_NULL;
    win->slot = 0;
    win->serial = 0;
    return MPI_SUCCESS;
}
