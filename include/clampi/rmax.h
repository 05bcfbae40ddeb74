/* clampi RMA extensions (the Quo Vadis RMA paper, "Quo Vadis MPI RMA?"): accumulate-intrinsic query,
 * window duplication with info, memory handles for dynamic windows, remote-completing
 * request-based operations and request-based target notification. Names CMPIX_; the
 * Quo Vadis RMA paper's MPIX_ spellings (on MPI_Win) are in <clampi/mpix.h>. User guide: docs/rma-extensions.md.
 *
 * Every function returns MPI_SUCCESS or an MPI error code raised through the window's
 * error handler (MPI_COMM_WORLD's for a null or freed window); on error nothing changes.
 * The memory-handle and notification calls need a UCX window (info clampi_backend=ucx);
 * on an MPI-backend window they raise MPI_ERR_WIN. The remote-completion calls
 * (CMPIX_Rrput, CMPIX_Rraccumulate, CMPIX_Rrget_accumulate) work on every window: on an
 * MPI-backend window the operation is flushed to its target (MPI's flush completes it at
 * the target) before the call returns, and the request is returned already complete. */
#ifndef CLAMPI_RMAX_H
#define CLAMPI_RMAX_H

#include <clampi/rma.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- info keys (the Quo Vadis RMA paper, §2) ------------------------------------------------------------ */
/* mpi_win_scope and mpi_win_order: CLAMPI_WIN_SCOPE, CLAMPI_WIN_ORDER in <clampi/rma.h>. */
/* "true": accumulate, get-accumulate, fetch-and-op and compare-and-swap go straight to UCX
 * atomics where CMPIX_Win_op_intrinsic says 1 (the program asserts it uses only those). */
#define CLAMPI_ACC_INTRINSIC "mpi_assert_accumulate_intrinsic"

/* ---- accumulate intrinsics (the Quo Vadis RMA paper, §2.3) ---------------------------------------------- */
/* ops: comma-separated list of sum, prod, band, bor, bxor, max, min, replace, no_op, cas.
 * *flag = 1 only if every listed op on up to max_count elements of datatype runs as a
 * network atomic issued at the origin, with no target CPU involvement, on every
 * endpoint the window uses (what UCX reports for its atomic lanes: shared-memory CPU
 * atomics yes, TCP's software-emulated atomics no). MPI-backend windows: always 0.
 * Unknown op name -> MPI_ERR_ARG; negative max_count -> MPI_ERR_COUNT. */
CLAMPI_API int CMPIX_Win_op_intrinsic(const char *ops, int max_count, MPI_Datatype datatype, CMPI_Win win, int *flag);

/* ---- window duplication (the Quo Vadis RMA paper, §3) --------------------------------------------------- */
/* Local. newwin shares win's memory, network resources and synchronization state
 * (locking one locks the other); keys in info override the parent's. On an MPI-backend
 * window only clampi's own keys (clampi_mode, sizes, ...) can differ: the duplicate has
 * its own cache. Freeing a duplicate frees only the duplicate. Freeing the parent frees
 * the duplicates still alive first (their handles must not be used afterwards). */
CLAMPI_API int CMPIX_Win_dup_with_info(CMPI_Win win, MPI_Info info, CMPI_Win *newwin);

/* ---- memory handles for dynamic windows (the Quo Vadis RMA paper, §4.2) --------------------------------- */
#define CMPIX_MAX_MEMHANDLE_SIZE 256
/* Registers [base, base+size), which must be attached to the dynamic UCX window win,
 * and writes a handle of *memhandle_size (<= CMPIX_MAX_MEMHANDLE_SIZE) plain bytes to
 * memhandle: send them to peers with any MPI call. Memory of the program's own (malloc,
 * the stack) has its whole pages moved onto a memory file that same-node peers map, at the
 * same address and with the same contents (CLAMPI_MH_SHARE): no other thread may write
 * those pages during this call or the release (docs/rma-extensions.md). */
CLAMPI_API int CMPIX_Memhandle_create(void *base, MPI_Aint size, CMPI_Win win, void *memhandle, int *memhandle_size);
/* Local. A window whose only target is target_rank (the handle's owner, a rank of win's
 * group), displacement 0 at the handle's base, in units of disp_unit. Only put, get,
 * accumulates (incl. fetch-and-op, compare-and-swap) and flushes; lock/unlock on win. */
CLAMPI_API int CMPIX_Win_from_memhandle(const void *memhandle, int memhandle_size, int target_rank, int disp_unit,
                                        MPI_Info info, CMPI_Win win, CMPI_Win *newwin);
/* Invalidates the handle (created here on win): every operation through a window made
 * from it that starts after the release (ordered after it, e.g. by a barrier) fails with
 * MPI_ERR_RMA_RANGE and writes nothing; flushes too. Operations concurrent with the release
 * may still land (docs/rma-extensions.md: the race left). */
CLAMPI_API int CMPIX_Memhandle_release(void *memhandle, CMPI_Win win);

/* ---- remote-completing request-based operations (the Quo Vadis RMA paper, §5.2) ------------------------- */
/* Like MPI_Rput / MPI_Raccumulate / MPI_Rget_accumulate, but the request completes only
 * when the operation is complete at the target as well. Any window (UCX: the request
 * completes with a flush of the one endpoint used; MPI backend: flushed in the call,
 * request complete on return). Passive-target epochs only, like MPI's request-based RMA. */
CLAMPI_API int CMPIX_Rrput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win,
                           MPI_Request *request);
CLAMPI_API int CMPIX_Rraccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                  int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                                  MPI_Op op, CMPI_Win win, MPI_Request *request);
CLAMPI_API int CMPIX_Rrget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                      void *result_addr, int result_count, MPI_Datatype result_datatype,
                                      int target_rank, MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Op op, CMPI_Win win, MPI_Request *request);

/* ---- request-based target notification (the Quo Vadis RMA paper, §5.1) ---------------------------------- */
/* A put that, once its data has landed at the target, notifies notify_id there
 * (0 <= notify_id < CMPIX_NOTIFY_MAX). */
#define CMPIX_NOTIFY_MAX 1024
CLAMPI_API int CMPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                                int notify_id, CMPI_Win win);
/* At the target: a request (MPI_Wait/MPI_Test/MPI_Waitany with any other requests) that
 * completes when a put carrying notify_id has landed in this rank's window memory;
 * status.MPI_SOURCE is the origin. Each notification completes one request. */
CLAMPI_API int CMPIX_Win_notify_request(CMPI_Win win, int notify_id, MPI_Request *req);

#ifdef __cplusplus
}
#endif
#endif
