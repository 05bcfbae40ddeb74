/* The paper's ("Quo Vadis MPI RMA?", the Quo Vadis RMA paper) RMA extensions on MPI_Win, for programs run
 * with clampi's transparent preload: link libclampi_pmpi (or preload it) and include this
 * header after <mpi.h>. Nothing else of clampi is needed.
 *
 * Every window the program creates under the preload is an MPI_Win; these functions work
 * on it (and on the windows they return, which are MPI_Win handles too: free them with
 * MPI_Win_free). The memory-handle and notification calls need a window on clampi's UCX
 * backend (info key clampi_backend=ucx, or mpi_win_scope=thread / mpi_win_order=true /
 * mpi_assert_accumulate_intrinsic=true, or CLAMPI_BACKEND=ucx in the environment; shared
 * windows never are): on others they fail with MPI_ERR_WIN. Every function returns
 * MPI_SUCCESS or an MPI error code raised through the window's error handler
 * (MPI_COMM_WORLD's for a window clampi does not know); on error nothing changes.
 * User guide: docs/rma-extensions.md ("MPIX_ on MPI_Win"). */
#ifndef CLAMPI_MPIX_H
#define CLAMPI_MPIX_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Local. A second MPI_Win on win's window: same memory and synchronization state
 * (locking one locks the other), its own info (keys in info override win's). */
int MPIX_Win_dup_with_info(MPI_Win win, MPI_Info info, MPI_Win *newwin);

/* ops: comma-separated sum, prod, band, bor, bxor, max, min, replace, no_op, cas. *flag = 1
 * only if each runs as a network atomic with no target CPU, up to max_count elements of
 * datatype, on every endpoint of win (MPI-backend windows: 0). Unknown op -> MPI_ERR_ARG. */
int MPIX_Win_op_intrinsic(const char *ops, int max_count, MPI_Datatype datatype, MPI_Win win, int *flag);

/* Memory handles on a dynamic window (UCX backend): plain bytes, at most
 * MPI_MAX_MEMHANDLE_SIZE, that peers turn into a window onto [base, base + size) of the
 * creating rank, local on both sides. Memory of the program's own has its whole pages
 * moved onto a memory file that same-node peers map (CLAMPI_MH_SHARE; no other thread may
 * write those pages while the handle is created or released). */
#ifndef MPI_MAX_MEMHANDLE_SIZE
#define MPI_MAX_MEMHANDLE_SIZE 256
#endif
int MPIX_Memhandle_create(void *base, MPI_Aint size, MPI_Win win, void *memhandle, int *memhandle_size);
/* newwin's only target is target_rank (the handle's owner); displacement 0 is the handle's
 * base. Only put, get, accumulates, fetch-and-op, compare-and-swap and flushes on it; lock
 * and unlock win. Garbage, released (own) or foreign handles -> MPI_ERR_ARG, another
 * target -> MPI_ERR_RANK. */
int MPIX_Win_from_memhandle(const void *memhandle, int memhandle_size, int target_rank, int disp_unit, MPI_Info info,
                            MPI_Win win, MPI_Win *newwin);
int MPIX_Memhandle_release(void *memhandle, MPI_Win win);

/* Remote-completing request-based operations: the request completes when the operation is
 * complete at the target. Passive-target epochs only. */
int MPIX_Rrput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
int MPIX_Rraccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                      MPI_Request *request);
int MPIX_Rrget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                          int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request);

/* A put that notifies notify_id at the target once its data has landed
 * (0 <= notify_id < 1024); at the target, a request completing with such a notification. */
int MPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, int notify_id, MPI_Win win);
int MPIX_Win_notify_request(MPI_Win win, int notify_id, MPI_Request *request);

#ifdef __cplusplus
}
#endif
#endif
