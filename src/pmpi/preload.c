/* libclampi_pmpi: clampi's transparent mode for unmodified MPI programs, through the MPI
 * profiling interface (LD_PRELOAD, or linked before the MPI library).
 *
 * Thin entry points only: each MPI_* function here finds the window's clampi state and
 * hands the call to the rma/ layer (clampi_win_*) or the coll/ layer (clampi_coll_*),
 * which do the work and reach the MPI library through PMPI_*.
 *
 * Non-recursion: src/rma and src/coll call PMPI_* for every function this file defines,
 * so nothing they do comes back here, whichever way the libraries are loaded. (The
 * alternative, compiling rma/ and coll/ twice with a MPI_ -> PMPI_ mapping header, would
 * build two different libclampi's; calling PMPI_ directly is allowed to any library and
 * keeps one compiled copy: the same objects go into libclampi and libclampi_pmpi.)
 *
 * Window state hangs on the MPI_Win as an attribute (its delete callback frees the state
 * inside MPI_Win_free); the hot path finds it through the rma layer's lock-free
 * MPI_Win -> state map. Windows clampi does not know (created before the preload was
 * active, or by clampi itself) and invalid arguments go to MPI unchanged, so MPI's own
 * checks and error messages apply. Everything not defined here is not wrapped. */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "pmpi/match_profile.h"
#include "rma/access.h"
#include "rma/errors.h"
#include "rma/stats.h"
#include "rma/window.h"

#define PRELOAD_API __attribute__((visibility("default")))

/* ---- process-wide switches: read once, at load ------------------------------------- */
static int active = 1;        /* 0 with CLAMPI_MODE=off: every call goes straight to MPI */
static int thread_multiple;   /* MPI initialised with MPI_THREAD_MULTIPLE */

__attribute__((constructor)) static void preload_init(void) {
    const char *mode = getenv("CLAMPI_MODE");
    active = !(mode && !strcmp(mode, CLAMPI_OFF));
}

/* ---- window state on the MPI_Win --------------------------------------------------- */
static int win_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int unmapped; /* windows that did not fit the map: found through the attribute */

/* Called by MPI_Win_free (before MPI frees the handle, so no new window can reuse the
 * handle while the map still names it). */
static int delete_state(MPI_Win win, int keyval, void *attr, void *extra) {
    clampi_win *w = attr;
    if (clampi_registry_lookup_mpi(win) == w) clampi_registry_unmap(w);
    else __atomic_fetch_sub(&unmapped, 1, __ATOMIC_RELAXED);
    clampi_win_release(w);
    return MPI_SUCCESS;
}

static void create_keyval(void) { MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_state, &win_keyval, NULL); }

static inline clampi_win *find(MPI_Win win) {
    clampi_win *w = clampi_registry_lookup_mpi(win);
    if (__builtin_expect(w != NULL, 1) || !__atomic_load_n(&unmapped, __ATOMIC_RELAXED)) return w;
    void *attr = NULL;
    int flag = 0;
    if (win != MPI_WIN_NULL && win_keyval != MPI_KEYVAL_INVALID) MPI_Win_get_attr(win, win_keyval, &attr, &flag);
    return flag ? attr : NULL;
}

/* Options are read and agreed on before the window exists: a bad value fails creation on
 * every rank with MPI_ERR_INFO_VALUE (through comm's error handler), as CMPI_Win_* do. */
static int creation_options(MPI_Info info, MPI_Comm comm, clampi_win_options *opts) {
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM; /* let MPI report it */
    if (!clampi_win_read_options(info, comm, opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    return MPI_SUCCESS;
}

/* State for a window MPI has just created. A rank that cannot get memory leaves the
 * window uncached (clampi_win_attach agrees over comm), never fails the program. */
static void manage(MPI_Win win, MPI_Win shm, MPI_Comm comm, MPI_Aint size, int disp_unit, int dynamic,
                   const clampi_win_options *opts) {
    pthread_once(&keyval_once, create_keyval);
    clampi_win *w;
    if (win_keyval == MPI_KEYVAL_INVALID ||
        clampi_win_attach(win, shm, comm, size, disp_unit, dynamic, opts, &w) != MPI_SUCCESS)
        return;
    /* The MPI-4 large-count RMA calls (MPI_Get_c, ...) are not wrapped: with an MPI that
     * has them, an operation clampi does not see may be outstanding at any flush. */
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_RMA
    w->elide_flushes = CLAMPI_ELIDE_NEVER;
#else
    w->elide_flushes = CLAMPI_ELIDE_WHILE_CACHING;
#endif
    if (MPI_Win_set_attr(win, win_keyval, w) != MPI_SUCCESS) {
        clampi_win_release(w);
        return;
    }
    if (clampi_registry_map(w) != 0) __atomic_fetch_add(&unmapped, 1, __ATOMIC_RELAXED);
}

/* The body of every creation call: options agreed on, MPI's call, clampi state. */
#define CREATE_WINDOW(pmpi_call, shm, size, disp_unit, dynamic)                          \
    clampi_win_options o;                                                              \
    int rc = active ? creation_options(info, comm, &o) : MPI_SUCCESS;                  \
    if (!active || rc == MPI_ERR_COMM) return pmpi_call;                               \
    if (rc != MPI_SUCCESS) return rc;                                                  \
    rc = pmpi_call;                                                                    \
    if (rc == MPI_SUCCESS) manage(*win, shm, comm, size, disp_unit, dynamic, &o);      \
    return rc

PRELOAD_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_create(base, size, disp_unit, info, comm, win), MPI_WIN_NULL, size, disp_unit, 0);
}

PRELOAD_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                 MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), MPI_WIN_NULL, size, disp_unit, 0);
}

/* Shared windows: gets to any rank of the window are a direct copy from its memory
 * (always fresh; legal since MPI_Get may read at any time before its completion). */
PRELOAD_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                        MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win),
                  o.shm_direct ? *win : MPI_WIN_NULL, size, disp_unit, 0);
}

/* Dynamic windows: cached by (target, absolute address); caching modes need the
 * clampi_dynamic_cache opt-in (see clampi_win_attach). */
PRELOAD_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_create_dynamic(info, comm, win), MPI_WIN_NULL, 0, 1, 1);
}

PRELOAD_API int MPI_Win_free(MPI_Win *win) {
    clampi_win *w = active && win ? find(*win) : NULL;
    if (w && clampi_options_stats_enabled()) clampi_stats_print(w);
    return PMPI_Win_free(win); /* the attribute's delete callback frees w */
}

/* ---- gets ---------------------------------------------------------------------------- */
/* Same signature as MPI_Get, so that both calls below are tail calls: with CLAMPI_MODE=off
 * MPI_Get costs a test and a jump more than PMPI_Get. */
static __attribute__((noinline)) int get_entry(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                                int target_rank, MPI_Aint target_disp, int target_count,
                                                MPI_Datatype target_datatype, MPI_Win win) {
    clampi_win *w;
    if (__builtin_expect(target_rank != MPI_PROC_NULL, 1) && (w = find(win)) &&
        !__atomic_load_n(&w->passthrough, __ATOMIC_RELAXED)) {
        int rc = clampi_win_get(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                target_count, target_datatype);
        if (__builtin_expect(rc >= 0, 1)) return rc;
    }
    return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                    target_datatype, win);
}

PRELOAD_API int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    if (__builtin_expect(!active, 0))
        return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                        target_datatype, win);
    return get_entry(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win);
}

/* A get served locally still owes the program a request: a generalized request,
 * completed before it is returned. */
static int done_query(void *extra, MPI_Status *status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int done_free(void *extra) { return MPI_SUCCESS; }
static int done_cancel(void *extra, int complete) { return MPI_SUCCESS; }

PRELOAD_API int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request *request) {
    clampi_win *w;
    if (active && target_rank != MPI_PROC_NULL && request && (w = find(win))) {
        int served = 0;
        int rc = clampi_win_rget(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                 target_count, target_datatype, request, &served);
        if (rc >= 0) {
            if (rc != MPI_SUCCESS || !served) return rc;
            rc = PMPI_Grequest_start(done_query, done_free, done_cancel, NULL, request);
            return rc == MPI_SUCCESS ? PMPI_Grequest_complete(*request) : rc;
        }
    }
    return PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, request);
}

/* ---- writes and atomics: drop what they may overwrite ------------------------------- */
/* The target range is checked with the target's count and type on both sides: argument
 * errors are MPI's to report (the call then goes to MPI unchanged). */
#define WRITE_OP(target, disp, tcount, ttype, call)                                                          \
    do {                                                                                                     \
        clampi_win *w;                                                                                       \
        clampi_access a;                                                                                     \
        if (!active || (target) == MPI_PROC_NULL || !(w = find(win)) ||                                      \
            clampi_win_write_begin(w, tcount, ttype, target, disp, tcount, ttype, &a) != -1)                 \
            return call;                                                                                     \
        return clampi_win_write_end(w, target, &a, call);                                                    \
    } while (0)

PRELOAD_API int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win));
}

PRELOAD_API int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request *request) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request));
}

PRELOAD_API int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                               MPI_Op op, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win));
}

PRELOAD_API int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                int target_rank, MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, op, win, request));
}

PRELOAD_API int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                   void *result_addr, int result_count, MPI_Datatype result_datatype,
                                   int target_rank, MPI_Aint target_disp, int target_count,
                                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                 result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                                 win));
}

PRELOAD_API int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                    void *result_addr, int result_count, MPI_Datatype result_datatype,
                                    int target_rank, MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                  result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                                  win, request));
}

PRELOAD_API int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, 1, datatype,
             PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win));
}

PRELOAD_API int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                     MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, 1, datatype,
             PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win));
}

/* ---- synchronization ------------------------------------------------------------------ */
#define WIN_OR_PASS(call)                             \
    clampi_win *w = active ? find(win) : NULL;        \
    if (!w) return call
#define RANK_OR_PASS(rank, call) \
    if ((rank) < 0 || (rank) >= w->nranks) return call

/* MPI_NAME(win) -> fn(w);  MPI_NAME(rank, win) -> fn(w, rank) */
#define WRAP_WIN(NAME, fn)                                  \
    PRELOAD_API int MPI_##NAME(MPI_Win win) {               \
        WIN_OR_PASS(PMPI_##NAME(win));                      \
        return fn(w);                                       \
    }
#define WRAP_RANK(NAME, fn)                                 \
    PRELOAD_API int MPI_##NAME(int rank, MPI_Win win) {     \
        WIN_OR_PASS(PMPI_##NAME(rank, win));                \
        RANK_OR_PASS(rank, PMPI_##NAME(rank, win));         \
        return fn(w, rank);                                 \
    }
WRAP_RANK(Win_flush, clampi_win_flush)
WRAP_RANK(Win_flush_local, clampi_win_flush_local)
WRAP_RANK(Win_unlock, clampi_win_unlock)
WRAP_WIN(Win_flush_all, clampi_win_flush_all)
WRAP_WIN(Win_flush_local_all, clampi_win_flush_local_all)
WRAP_WIN(Win_unlock_all, clampi_win_unlock_all)
WRAP_WIN(Win_complete, clampi_win_complete)
WRAP_WIN(Win_sync, clampi_win_sync) /* in transparent mode: no in-flight sharing across it */

PRELOAD_API int MPI_Win_fence(int assert, MPI_Win win) {
    WIN_OR_PASS(PMPI_Win_fence(assert, win));
    return clampi_win_fence(w, assert);
}

/* Epoch openings and the target side of PSCW change nothing clampi keeps: they are
 * defined here only so that every synchronization call is accounted for. */
PRELOAD_API int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    return PMPI_Win_lock(lock_type, rank, assert, win);
}
PRELOAD_API int MPI_Win_lock_all(int assert, MPI_Win win) { return PMPI_Win_lock_all(assert, win); }
PRELOAD_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) { return PMPI_Win_start(group, assert, win); }
PRELOAD_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) { return PMPI_Win_post(group, assert, win); }
PRELOAD_API int MPI_Win_wait(MPI_Win win) { return PMPI_Win_wait(win); }
PRELOAD_API int MPI_Win_test(MPI_Win win, int *flag) { return PMPI_Win_test(win, flag); }

/* ---- info and names: clampi's keys, CLAMPI_WINDOW_MODES ------------------------------ */
PRELOAD_API int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
    int rc = PMPI_Win_set_info(win, info);
    clampi_win *w = active && rc == MPI_SUCCESS ? find(win) : NULL;
    if (!w) return rc;
    clampi_win_options o = w->opts;
    const char *bad_key = NULL;
    if (clampi_options_update(info, &o, &bad_key) != MPI_SUCCESS) return clampi_raise_win(w, CLAMPI_E_INFO);
    if (memcmp(&o, &w->opts, sizeof o)) clampi_win_reconfigure(w, &o);
    return MPI_SUCCESS;
}

PRELOAD_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    int rc = PMPI_Win_get_info(win, info_used);
    clampi_win *w = active && rc == MPI_SUCCESS ? find(win) : NULL;
    if (w) clampi_options_to_info(&w->opts, *info_used);
    return rc;
}

PRELOAD_API int MPI_Win_set_name(MPI_Win win, const char *win_name) {
    int rc = PMPI_Win_set_name(win, win_name);
    clampi_win *w = active && rc == MPI_SUCCESS ? find(win) : NULL;
    clampi_mode mode;
    if (w && clampi_options_window_mode(win_name, &mode) == 1 && mode != w->opts.mode) {
        clampi_win_options o = w->opts;
        o.mode = mode;
        clampi_win_reconfigure(w, &o);
    }
    return rc;
}

/* ---- shared heap and collectives (src/coll), switchable: CLAMPI_SHMEM_ALLOC, CLAMPI_COLL */
/* The heap is created at initialisation, where every process is present: MPI_Alloc_mem
 * is local in MPI, and creating the heap later would make it collective. */
static void after_init(void) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    thread_multiple = provided == MPI_THREAD_MULTIPLE;
    if (active && clampi_coll_options_get()->shmem_alloc) clampi_coll_heap_ensure(0);
}

PRELOAD_API int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) after_init();
    return rc;
}

PRELOAD_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) after_init();
    return rc;
}

PRELOAD_API int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    if (active && baseptr && clampi_coll_heap_ready()) {
        int handled = 0;
        int rc = clampi_coll_alloc_mem(size, info, baseptr, &handled);
        if (rc == MPI_SUCCESS && handled) return rc;
    }
    return PMPI_Alloc_mem(size, info, baseptr);
}

PRELOAD_API int MPI_Free_mem(void *base) {
    if (active && clampi_coll_heap_ready()) {
        int handled = 0;
        int rc = clampi_coll_free_mem(base, &handled);
        if (handled) {
            if (rc != MPI_SUCCESS) MPI_Comm_call_errhandler(MPI_COMM_WORLD, rc);
            return rc;
        }
    }
    return PMPI_Free_mem(base);
}

/* The shared-heap collectives keep per-communicator state that is not built for
 * concurrent collectives from several threads: under MPI_THREAD_MULTIPLE they are MPI's. */
PRELOAD_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    if (active && !thread_multiple) {
        int handled = 0;
        int rc = clampi_coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                      CMPIX_COLL_AUTO, &handled);
        if (handled) return rc;
    }
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

PRELOAD_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    if (active && !thread_multiple) {
        int handled = 0;
        int rc = clampi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                       CMPIX_COLL_AUTO, &handled);
        if (handled) return rc;
    }
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

/* ---- finalize ------------------------------------------------------------------------ */
/* Windows the program never freed still get their stats line. */
PRELOAD_API int MPI_Finalize(void) {
    clampi_match_profile_finalize(); /* CLAMPI_MATCH_PROFILE (match_profile.c) */
    if (active && clampi_options_stats_enabled()) {
        clampi_registry_for_each_mapped(clampi_stats_print);
        clampi_coll_stats_print();
    }
    return PMPI_Finalize();
}
