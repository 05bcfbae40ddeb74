/* The node-shared heap (services/heap.h). */
#include "services/heap.h"

#include <clampi/coll.h>

#include "coll/engine/arena.h"
#include "common/errors.h"
#include "common/options.h"
#include "numa/first_touch.h"
#include "services/finalize.h"
#include "services/shared_segments.h"
#include "topo/node.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    int ready;
    clampi_shared_segments segs;
    int nseg;
    char **seg_base; /* [nseg] segment start in this process */
    size_t *seg_size;
    int me;
    uint64_t id;             /* the same on every process of the node, distinct per heap */
    clampi_coll_arena arena; /* my segment */
    unsigned long fallbacks;
    pthread_mutex_t lock;
} heap = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The heap's options, read once through the options table. */
static size_t heap_size(void) {
    static size_t bytes;
    if (!bytes) bytes = (size_t)clampi_opt_process(CLAMPI_OPT_HEAP_SIZE).u;
    return bytes;
}

int clampi_heap_alloc_enabled(void) {
    static int on = -1;
    if (on < 0) on = (int)clampi_opt_process(CLAMPI_OPT_SHMEM_ALLOC).u;
    return on;
}

int clampi_heap_ready(void) { return heap.ready; }
uint64_t clampi_heap_id(void) { return heap.ready ? heap.id : 0; }
unsigned long clampi_heap_fallbacks(void) { return heap.fallbacks; }

int clampi_heap_ensure(size_t bytes) {
    if (heap.ready) return MPI_SUCCESS;
    if (bytes == 0) bytes = heap_size();
    bytes = (bytes + 4095) & ~(size_t)4095;
    /* The node communicator is needed only to make the heap: freed at once, so the MPI keeps
     * no communicator of clampi's alive for the run (on MPICH 4.0 each one alive made the
     * program's small messages a few per cent slower; docs/coll.md). */
    MPI_Comm node;
    int err = clampi_node_split(MPI_COMM_WORLD, &node);
    if (err != MPI_SUCCESS) return err;
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    err = clampi_shared_segments_allocate(node, bytes, &heap.segs);
    if (err != MPI_SUCCESS) { /* no shared memory here: MPI_Alloc_mem stays MPI's */
        MPI_Comm_free(&node);
        return err;
    }
    MPI_Comm_rank(node, &heap.me);
    heap.nseg = heap.segs.n;
    heap.seg_base = heap.segs.base;
    heap.seg_size = heap.segs.size;
    clampi_coll_arena_init(&heap.arena, heap.seg_base[heap.me], heap.seg_size[heap.me]);
    /* The heap's identity (memory handles name it): node rank 0's clock, pid and address. */
    if (heap.me == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        heap.id = ((uint64_t)ts.tv_sec * 1000000007ull) ^ ((uint64_t)ts.tv_nsec << 20) ^ ((uint64_t)getpid() << 40) ^
                  (uint64_t)(uintptr_t)heap.seg_base[0];
        if (heap.id == 0) heap.id = 1;
    }
    MPI_Bcast(&heap.id, 1, MPI_UINT64_T, 0, node);
    MPI_Comm_free(&node);
    /* unmapped before MPI_Finalize tears down the MPI library */
    clampi_finalize_at(CLAMPI_FINALIZE_HEAP, clampi_heap_teardown);
    heap.ready = 1;
    return MPI_SUCCESS;
}

void clampi_heap_teardown(void) {
    if (!heap.ready) return;
    heap.ready = 0;
    clampi_shared_segments_free(&heap.segs);
    heap.seg_base = NULL;
    heap.seg_size = NULL;
    memset(&heap.arena, 0, sizeof heap.arena);
}

int clampi_heap_locate(const void *p, size_t n, int32_t *seg, uint64_t *off) {
    if (!heap.ready || p == NULL) return 0;
    const char *c = p;
    /* own segment first: the common case */
    for (int k = 0; k < heap.nseg; k++) {
        int i = (heap.me + k) % heap.nseg;
        const char *b = heap.seg_base[i];
        if (b != NULL && c >= b && c < b + heap.seg_size[i] && n <= (size_t)(b + heap.seg_size[i] - c)) {
            *seg = i;
            *off = (uint64_t)(c - b);
            return 1;
        }
    }
    return 0;
}

char *clampi_heap_addr(int32_t seg, uint64_t off) { return heap.seg_base[seg] + off; }

int clampi_heap_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr, int *handled) {
    *handled = 0;
    if (!clampi_heap_alloc_enabled() || size < 0) return MPI_SUCCESS;
    if (!heap.ready) {
        int err = clampi_heap_ensure(0);
        if (err != MPI_SUCCESS) return MPI_SUCCESS; /* no heap: the caller falls back to MPI_Alloc_mem */
    }
    pthread_mutex_lock(&heap.lock);
    void *p = clampi_coll_arena_alloc(&heap.arena, (size_t)size);
    if (p == NULL) heap.fallbacks++;
    pthread_mutex_unlock(&heap.lock);
    if (p != NULL) {
        clampi_numa_touch_own(p, (size_t)size); /* placed by its owner, not by a peer's first read */
        *(void **)baseptr = p;
        *handled = 1;
    }
    return MPI_SUCCESS;
}

int clampi_heap_free_mem(void *base, int *handled) {
    *handled = 0;
    if (!heap.ready || base == NULL) return MPI_SUCCESS;
    const char *c = base;
    const char *b = heap.seg_base[heap.me];
    if (c >= b && c < b + heap.seg_size[heap.me]) {
        *handled = 1;
        pthread_mutex_lock(&heap.lock);
        int rc = clampi_coll_arena_free(&heap.arena, base);
        pthread_mutex_unlock(&heap.lock);
        return rc == 0 ? MPI_SUCCESS : MPI_ERR_ARG;
    }
    int32_t seg;
    uint64_t off;
    if (clampi_heap_locate(base, 1, &seg, &off)) {
        *handled = 1; /* another process's heap memory: not ours to free */
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* ---- public API ------------------------------------------------------------------ */
CLAMPI_API int CMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    if (size < 0 || baseptr == NULL) {
        int err = size < 0 ? MPI_ERR_SIZE : MPI_ERR_ARG;
        clampi_raise_mpi(MPI_COMM_WORLD, err);
        return err;
    }
    int handled;
    int err = clampi_heap_alloc_mem(size, info, baseptr, &handled);
    if (err == MPI_SUCCESS && !handled) err = PMPI_Alloc_mem(size, info, baseptr);
    if (err != MPI_SUCCESS) clampi_raise_mpi(MPI_COMM_WORLD, err);
    return err;
}

CLAMPI_API int CMPI_Free_mem(void *base) {
    int handled;
    int err = clampi_heap_free_mem(base, &handled);
    if (err == MPI_SUCCESS && !handled) err = PMPI_Free_mem(base);
    if (err != MPI_SUCCESS) clampi_raise_mpi(MPI_COMM_WORLD, err);
    return err;
}

CLAMPI_API int CMPIX_Heap_init(MPI_Aint bytes_per_process) {
    if (bytes_per_process < 0) {
        clampi_raise_mpi(MPI_COMM_WORLD, MPI_ERR_SIZE);
        return MPI_ERR_SIZE;
    }
    int err = clampi_heap_ensure((size_t)bytes_per_process);
    if (err != MPI_SUCCESS) clampi_raise_mpi(MPI_COMM_WORLD, err);
    return err;
}

CLAMPI_API int CMPIX_Heap_info_get(CMPIX_Heap_info *info) {
    if (info == NULL) {
        clampi_raise_mpi(MPI_COMM_WORLD, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    memset(info, 0, sizeof *info);
    int err = clampi_heap_ensure(0);
    if (err != MPI_SUCCESS) {
        clampi_raise_mpi(MPI_COMM_WORLD, err);
        return err;
    }
    pthread_mutex_lock(&heap.lock);
    info->enabled = clampi_heap_alloc_enabled();
    info->capacity = heap.arena.size;
    info->in_use = heap.arena.in_use;
    info->largest_free = clampi_coll_arena_largest_free(&heap.arena);
    info->fallbacks = heap.fallbacks;
    pthread_mutex_unlock(&heap.lock);
    return MPI_SUCCESS;
}
