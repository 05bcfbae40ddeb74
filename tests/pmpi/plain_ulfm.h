/* For the ULFM test programs: Open MPI's extension header where it has ULFM
 * (OMPI_HAVE_MPI_EXT_FTMPI), and revoked(rc): rc's class is MPIX_ERR_REVOKED. */
#ifndef CLAMPI_TESTS_PLAIN_ULFM_H
#define CLAMPI_TESTS_PLAIN_ULFM_H
#include <mpi.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#ifdef OMPI_HAVE_MPI_EXT_FTMPI
static inline int revoked(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls == MPIX_ERR_REVOKED;
}
#endif
#endif
