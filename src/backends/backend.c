/* The backends by kind: the window layer chooses a table here, never a backend by name. */
#include "backends/backend.h"

const clampi_backend_ops *clampi_backend_table(clampi_backend_kind kind) {
    switch (kind) {
    case CLAMPI_BACKEND_KIND_UCX: return &clampi_backend_ucx;
    case CLAMPI_BACKEND_KIND_MPI: break;
    }
    return &clampi_backend_mpi;
}
