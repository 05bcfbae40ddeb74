/* clampi's error codes: MPI error codes in the standard classes (MPI_Error_class gives
 * MPI_ERR_RANK, MPI_ERR_DISP, ...) with a clampi-specific message (MPI_Error_string). */
#ifndef CLAMPI_RMA_ERRORS_H
#define CLAMPI_RMA_ERRORS_H
#include <mpi.h>

#include "rma/window.h"

typedef enum clampi_error {
    CLAMPI_E_WIN,          /* null or freed window */
    CLAMPI_E_RANK,         /* target rank out of range */
    CLAMPI_E_COUNT,        /* negative count */
    CLAMPI_E_DISP,         /* negative displacement */
    CLAMPI_E_RANGE,        /* access past the end of the target's window */
    CLAMPI_E_TYPE,         /* null or uncommitted datatype */
    CLAMPI_E_TYPE_MISMATCH,/* origin and target data sizes differ */
    CLAMPI_E_INFO,         /* bad info value or environment variable */
    CLAMPI_E_ARG,          /* other bad argument (null pointer, bad size or disp unit) */
    CLAMPI_E_NOMEM,        /* out of memory */
    CLAMPI_E_RMA_SYNC,     /* synchronization call or operation outside a matching epoch */
    CLAMPI_E_TYPE_LAYOUT,  /* UCX window: target datatype not contiguous (documented limit) */
    CLAMPI_E_OP,           /* invalid or unsupported reduction operation */
    CLAMPI_E_LOCKTYPE,     /* lock type neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE */
    CLAMPI_E_BASE,         /* detach of memory that is not attached; attach that cannot be registered */
    CLAMPI_E_UCX,          /* UCX reported a failure */
    CLAMPI_NERRORS
} clampi_error;

/* The MPI error code for e (registered with MPI on first use). */
int clampi_error_code(clampi_error e);
/* Raise e through the window's / communicator's error handler; returns the code. */
int clampi_raise_win(const clampi_win *w, clampi_error e);
int clampi_raise_comm(MPI_Comm comm, clampi_error e);
/* No usable window to raise on: MPI_COMM_WORLD's handler. */
int clampi_raise_nowin(clampi_error e);
#endif
