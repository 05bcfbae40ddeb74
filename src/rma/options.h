/* Per-window options: every knob of the RMA cache, read in one place.
 * Strongest first: window info key > CLAMPI_* environment variable > compile-time default. */
#ifndef CLAMPI_RMA_OPTIONS_H
#define CLAMPI_RMA_OPTIONS_H
#include <mpi.h>
#include <stddef.h>
#include "backends/backend.h"

#ifndef CLAMPI_DEFAULT_INDEX_ENTRIES
#define CLAMPI_DEFAULT_INDEX_ENTRIES 16384
#endif
#ifndef CLAMPI_DEFAULT_BUFFER_BYTES
#define CLAMPI_DEFAULT_BUFFER_BYTES (16u << 20)
#endif

typedef enum clampi_mode {
    CLAMPI_MODE_TRANSPARENT, /* cache lives until the next flush / epoch end: only in-flight dedup */
    CLAMPI_MODE_ALWAYS,      /* never invalidated */
    CLAMPI_MODE_USER,        /* invalidated by CMPI_Win_invalidate */
    CLAMPI_MODE_OFF          /* pass-through */
} clampi_mode;

typedef struct clampi_win_options {
    clampi_mode mode;
    size_t index_entries;
    size_t buffer_bytes;
    int shm_direct;    /* serve same-node targets by load/store when possible */
    int dynamic_cache; /* dynamic windows may use caching modes (opt-in, see window.c) */
    int adaptive;      /* adapt index and buffer sizes at run time (sizes above are the start) */
    /* backend and the Quo Vadis RMA paper's semantics keys (creation time; see docs/ucx-backend.md) */
    clampi_backend_kind backend;   /* clampi_backend = mpi | ucx */
    clampi_progress_kind progress; /* clampi_progress = auto | thread | none (UCX windows) */
    int thread_scope;              /* mpi_win_scope = thread (requested; in effect only on UCX windows) */
    int ordered;                   /* mpi_win_order = true (requested; in effect only on UCX windows) */
    int acc_intrinsic;             /* mpi_assert_accumulate_intrinsic = true: UCX atomics (src/rmax/op_intrinsic.c) */
} clampi_win_options;

/* Fills opts from defaults, environment and info (info may be MPI_INFO_NULL).
 * Returns MPI_SUCCESS, or MPI_ERR_INFO_VALUE with *bad_key naming the offending key. */
int clampi_options_read(MPI_Info info, clampi_win_options *opts, const char **bad_key);
/* Applies only the clampi keys present in info (MPI_Win_set_info); same errors. */
int clampi_options_update(MPI_Info info, clampi_win_options *opts, const char **bad_key);
/* Adds the window's clampi keys to info (MPI_Win_get_info): the values in effect. */
void clampi_options_to_info(const clampi_win_options *opts, MPI_Info info);
/* CLAMPI_WINDOW_MODES="graph:always_cache,tree:user_defined": 1 and *mode if the window
 * name is listed, 0 if not, -1 if the variable is malformed. */
int clampi_options_window_mode(const char *name, clampi_mode *mode);
const char *clampi_backend_name(clampi_backend_kind b);
const char *clampi_progress_name(clampi_progress_kind p);
/* "transparent", "always_cache", ... */
const char *clampi_mode_name(clampi_mode mode);
#endif
