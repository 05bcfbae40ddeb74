/* Requests completed by clampi's progress (CMPIX_Rrput & co., CMPIX_Win_notify_request, the
 * request-based calls of UCX windows):
 * MPI generalized requests that MPI_Wait / MPI_Test / MPI_Waitany drive like any other.
 *
 * Generalized requests of MPI-2 have no progress hook, so each MPI gets one:
 *  - MPICH: MPIX_Grequest_start's poll function, called by MPICH's progress engine;
 *  - Open MPI: a callback in its progress engine (common/progress_hook.h, shared with the
 *    message layer), called from every wait/test loop;
 *  - otherwise: a helper thread polls every 50 us (needs MPI_THREAD_MULTIPLE to be safe).
 * The poll function progresses the UCX worker the operation depends on and reports
 * whether the request is done; clampi then calls MPI_Grequest_complete. */
#ifndef CLAMPI_COMMON_GREQ_H
#define CLAMPI_COMMON_GREQ_H
#include <mpi.h>

typedef struct clampi_greq clampi_greq;
/* 1 when done (status filled: source, tag, error), 0 if not yet. Called with no lock held. */
typedef int (*clampi_greq_poll_fn)(void *ctx, MPI_Status *status);

/* MPI_Cancel: returns 1 if the request was withdrawn (it then completes as cancelled). */
typedef int (*clampi_greq_cancel_fn)(void *ctx);

/* Starts a request; ctx is freed with free_ctx(ctx) when the request is freed. cancel may
 * be NULL (not cancellable). */
int clampi_greq_start(clampi_greq_poll_fn poll, void *ctx, void (*free_ctx)(void *), clampi_greq_cancel_fn cancel,
                      MPI_Request *req);
/* Polls every pending request once (also called by clampi's blocking paths). */
void clampi_greq_progress(void);
/* An already complete request (an operation served locally or completed before returning):
 * MPI_Wait and MPI_Test on it return at once with an empty status. */
int clampi_request_done(MPI_Request *req);
#endif
