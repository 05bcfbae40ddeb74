/* The backends by kind: the window layer chooses a table here, never a backend by name. */
#include "backends/backend.h"

const clampi_backend_ops *clampi_backend_table(clampi_backend_kind kind) {
    switch (kind) {
#if CLAMPI_HAVE_UCX
    case CLAMPI_BACKEND_KIND_UCX: return &clampi_backend_ucx;
#else
    case CLAMPI_BACKEND_KIND_UCX: break; /* built without UCX: window options never ask for it */
#endif
    case CLAMPI_BACKEND_KIND_MPI: break;
    }
    return &clampi_backend_mpi;
}
