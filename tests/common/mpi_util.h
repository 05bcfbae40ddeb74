/* Helpers shared by clampi's MPI tests. */
#ifndef CLAMPI_TEST_MPI_UTIL_H
#define CLAMPI_TEST_MPI_UTIL_H
#include <clampi.h>

#include "check.h"

/* The MPI error class of rc must be cls. */
#define CHECK_CLASS(rc, cls)                                                                                     \
    do {                                                                                                         \
        int _rc = (rc), _cls = -1;                                                                               \
        if (_rc != MPI_SUCCESS) MPI_Error_class(_rc, &_cls);                                                     \
        if (_cls != (cls)) {                                                                                     \
            fprintf(stderr, "%s:%d: %s: expected error class %d, got rc=%d class=%d\n", __FILE__, __LINE__, #rc, \
                    (int)(cls), _rc, _cls);                                                                      \
            CHECK_FAIL_EXIT();                                                                                   \
        }                                                                                                        \
    } while (0)

/* Info asking for clampi's UCX backend (free with MPI_Info_free). */
static inline MPI_Info ucx_info(void) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    return info;
}

/* A dynamic UCX window over MPI_COMM_WORLD whose errors return (the memory-handle tests'
 * parent window); MPI_COMM_WORLD's errors return too. */
static inline CMPI_Win ucx_dynamic_window(MPI_Info info) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CMPI_Win dyn;
    CHECK_EQ_INT(CMPI_Win_create_dynamic(info, MPI_COMM_WORLD, &dyn), MPI_SUCCESS);
    MPI_Win_set_errhandler(dyn.win, MPI_ERRORS_RETURN);
    return dyn;
}

/* Info for a window in the given mode that always uses the cache (no shared-memory
 * shortcut), so tests exercise the cache even when ranks share a node. */
static inline MPI_Info cache_info(const char *mode, const char *buffer, const char *index) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, mode);
    MPI_Info_set(info, CLAMPI_SHM_DIRECT, "false");
    if (buffer) MPI_Info_set(info, CLAMPI_BUFFER_SIZE, buffer);
    if (index) MPI_Info_set(info, CLAMPI_INDEX_SIZE, index);
    return info;
}

static inline CMPI_Win_stats stats_of(CMPI_Win w) {
    CMPI_Win_stats s;
    CHECK(CMPI_Win_get_stats(w, &s) == MPI_SUCCESS);
    return s;
}
#endif
