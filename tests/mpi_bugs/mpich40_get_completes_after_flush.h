/* MPICH 4.0.2 (Debian 12, ch4:ucx, UCX 1.13), no clampi: MPI_Win_flush/MPI_Win_flush_all
 * return before a get from an MPI_Win_allocate window has written all of its origin buffer;
 * UCX writes the rest later (ucp_get_rep_handler, inside a later MPI call such as
 * MPI_Win_unlock_all), into memory the program may have freed or reused. Seen with 2
 * ranks and only under load: with the arguments below, 0 of 30 runs alone on a 2-core
 * machine, 4 of 20 beside a second such loop, and nearly every run beside a test suite's MPI
 * jobs. It is always the same get: rank 1's contiguous 483 bytes from rank 0, flushed while
 * rank 0 waits in its own flush of a 1 MiB get, land inside rank 1's MPI_Win_unlock_all.
 *
 * The reproducer is the differential get test itself with clampi taken out: this header
 * stands in for clampi.h and makes clampi's window a second plain MPI window, so every call
 * is MPICH's. Under AddressSanitizer the late write shows as a heap-use-after-free in
 * ucp_get_rep_handler called from MPI_Win_unlock_all (after the test compared and freed the
 * buffers: both windows' gets had come back unwritten alike); without it, as glibc's
 * "malloc(): unaligned tcache chunk detected" abort.
 *
 *   mpicc.mpich -g -fsanitize=address -include tests/mpi_bugs/mpich40_get_completes_after_flush.h \
 *       -Iinclude -Itests/common tests/mpi/test_differential.c -o repro
 *   for i in $(seq 50); do mpiexec.mpich -n 2 ./repro user_defined allocate_nodirect 12 27 || break; done
 *
 * (run two such loops at once). The differential tests never failed this way on Open MPI.
 * tests/mpi/test_differential.c frees origin buffers only after their epoch has ended, and
 * on a mismatch re-reads the range to judge clampi's bytes (docs/testing.md). */
#ifndef CLAMPI_H /* instead of clampi.h */
#define CLAMPI_H
#define CLAMPI_REPRO_FREE_AT_FLUSH /* the test frees each origin buffer right after comparing it */
#include <mpi.h>
#include <string.h>

#define CLAMPI_MODE "clampi_mode"
#define CLAMPI_BUFFER_SIZE "clampi_buffer_size"
#define CLAMPI_INDEX_SIZE "clampi_index_size"
#define CLAMPI_SHM_DIRECT "clampi_shm_direct"
#define CLAMPI_TRANSPARENT "transparent"
#define CLAMPI_ALWAYS_CACHE "always_cache"
#define CLAMPI_USER_DEFINED "user_defined"
#define CLAMPI_OFF "off"

typedef struct {
    MPI_Win win;
} CMPI_Win;
typedef struct {
    unsigned long long gets, hits, inflight_hits, misses, bypassed, direct, evictions;
} CMPI_Win_stats;

static inline int CMPI_Win_allocate(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void *base, CMPI_Win *w) {
    return MPI_Win_allocate(size, unit, info, comm, base, &w->win);
}
static inline int CMPI_Win_create(void *base, MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, CMPI_Win *w) {
    return MPI_Win_create(base, size, unit, info, comm, &w->win);
}
static inline int CMPI_Win_free(CMPI_Win *w) { return MPI_Win_free(&w->win); }
static inline int CMPI_Get(void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt, CMPI_Win w) {
    return MPI_Get(o, oc, ot, t, d, tc, tt, w.win);
}
static inline int CMPI_Put(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                           CMPI_Win w) {
    return MPI_Put(o, oc, ot, t, d, tc, tt, w.win);
}
static inline int CMPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                                  MPI_Op op, CMPI_Win w) {
    return MPI_Accumulate(o, oc, ot, t, d, tc, tt, op, w.win);
}
static inline int CMPI_Win_fence(int a, CMPI_Win w) { return MPI_Win_fence(a, w.win); }
static inline int CMPI_Win_flush(int t, CMPI_Win w) { return MPI_Win_flush(t, w.win); }
static inline int CMPI_Win_flush_all(CMPI_Win w) { return MPI_Win_flush_all(w.win); }
static inline int CMPI_Win_lock(int type, int t, int a, CMPI_Win w) { return MPI_Win_lock(type, t, a, w.win); }
static inline int CMPI_Win_unlock(int t, CMPI_Win w) { return MPI_Win_unlock(t, w.win); }
static inline int CMPI_Win_lock_all(int a, CMPI_Win w) { return MPI_Win_lock_all(a, w.win); }
static inline int CMPI_Win_unlock_all(CMPI_Win w) { return MPI_Win_unlock_all(w.win); }
static inline int CMPI_Win_invalidate(CMPI_Win w) { return (void)w, MPI_SUCCESS; }
/* what the test's final checks need of a cache that served a few gets */
static inline int CMPI_Win_get_stats(CMPI_Win w, CMPI_Win_stats *s) {
    (void)w;
    memset(s, 0, sizeof *s);
    s->gets = 2, s->hits = 1, s->misses = 1;
    return MPI_SUCCESS;
}
#endif
