/* The error table: clampi's error codes, one per row, each an MPI error code in a standard
 * class (MPI_Error_class gives MPI_ERR_RANK, MPI_ERR_DISP, ...) with a clampi message
 * (MPI_Error_string), registered with MPI on first use. Every part raises through here:
 * windows (rma/errors.h adds the clampi_win form), collectives, matching, the preload. */
#ifndef CLAMPI_COMMON_ERRORS_H
#define CLAMPI_COMMON_ERRORS_H
#include <mpi.h>

typedef enum clampi_error {
    CLAMPI_E_WIN,           /* null or freed window */
    CLAMPI_E_RANK,          /* target rank out of range */
    CLAMPI_E_COUNT,         /* negative count */
    CLAMPI_E_DISP,          /* negative displacement */
    CLAMPI_E_RANGE,         /* access past the end of the target's window */
    CLAMPI_E_TYPE,          /* null or uncommitted datatype */
    CLAMPI_E_TYPE_MISMATCH, /* origin and target data sizes differ */
    CLAMPI_E_INFO,          /* bad info value or environment variable */
    CLAMPI_E_ARG,           /* other bad argument (null pointer, bad size or disp unit) */
    CLAMPI_E_NOMEM,         /* out of memory */
    CLAMPI_E_RMA_SYNC,      /* synchronization call or operation outside a matching epoch */
    CLAMPI_E_TYPE_LAYOUT,   /* UCX window: target datatype not contiguous (documented limit) */
    CLAMPI_E_OP,            /* invalid or unsupported reduction operation */
    CLAMPI_E_LOCKTYPE,      /* lock type neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE */
    CLAMPI_E_BASE,          /* detach of memory that is not attached; attach that cannot be registered */
    CLAMPI_E_UCX,           /* UCX reported a failure */
    CLAMPI_NERRORS
} clampi_error;

/* The MPI error code for e (registered with MPI on first use). */
int clampi_error_code(clampi_error e);
/* Raise e through the window's / communicator's error handler; returns the code, or, under
 * the preload after a handler of the program's making, what the MPI's own calls return then
 * (MPI_SUCCESS on MPICH 5, the code on the others). */
int clampi_raise_on_win(MPI_Win win, clampi_error e);
int clampi_raise_comm(MPI_Comm comm, clampi_error e);
/* Raise one of MPI's own codes (code) through comm's handler (MPI_COMM_WORLD's when comm
 * is MPI_COMM_NULL), as MPI would for the same bad call; returns as above. */
int clampi_raise_mpi(MPI_Comm comm, int code);
/* The same through the window's handler: a code an MPI call made for the window returned. */
int clampi_raise_mpi_on_win(MPI_Win win, int code);
/* A multiple-completion call's MPI_ERR_IN_STATUS, one of whose statuses failed with
 * status_code: the handler gets what this MPI gives it (under the preload), returns as above. */
int clampi_raise_in_status(MPI_Comm comm, int status_code);
/* Under the preload: raises follow how the program's MPI treats a handler of the program's
 * making (what a call returns after it, which code a multiple completion hands it); the
 * linked library's CMPI_ / CMPIX_ calls always return the error code. */
void clampi_errors_as_mpi(void);
int clampi_errors_follow_mpi(void); /* 1 under the preload */
/* eh is neither predefined (MPI_ERRORS_RETURN, _ARE_FATAL, _ABORT) nor null. */
int clampi_errhandler_is_programs(MPI_Errhandler eh);
/* No usable window to raise on: MPI_COMM_WORLD's handler. */
int clampi_raise_nowin(clampi_error e);
#endif
