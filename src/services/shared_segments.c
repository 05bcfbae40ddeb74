/* See shared_segments.h. */
#include "services/shared_segments.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void name_of(char *out, size_t len, const uint64_t tag[3], int rank) {
    snprintf(out, len, "/clampi-%llx-%llx-%llx-%d", (unsigned long long)tag[0], (unsigned long long)tag[1],
             (unsigned long long)tag[2], rank);
}

static void unmap_all(clampi_shared_segments *s) {
    for (int i = 0; s->base && i < s->n; i++)
        if (s->base[i]) munmap(s->base[i], s->size[i]);
    free(s->base);
    free(s->size);
    memset(s, 0, sizeof *s);
}

/* Maps segment `name` of `bytes`; create: makes it first (*created: it exists now because
 * of this call, so this process removes its name). NULL if it could not. */
static char *map(const char *name, size_t bytes, int create, int *created) {
    int fd = shm_open(name, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
    if (created) *created = create && fd >= 0;
    if (fd < 0) return NULL;
    void *p = create && ftruncate(fd, (off_t)bytes) != 0 ? MAP_FAILED
                                                         : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

int clampi_shared_segments_allocate(MPI_Comm comm, size_t bytes, clampi_shared_segments *s) {
    static _Atomic uint64_t made; /* this process's allocations: one name per allocation */
    memset(s, 0, sizeof *s);
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    /* names unique on the host: the first process's pid, its count and clock */
    uint64_t tag[3] = {0, 0, 0};
    if (me == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        tag[0] = (uint64_t)getpid();
        tag[1] = atomic_fetch_add(&made, 1);
        tag[2] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    int err = MPI_Bcast(tag, 3, MPI_UINT64_T, 0, comm);
    if (err != MPI_SUCCESS) return err;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t mine = (uint64_t)((bytes + page - 1) / page * page), *all = malloc((size_t)n * sizeof *all);
    s->n = n;
    s->base = calloc((size_t)n, sizeof *s->base);
    s->size = calloc((size_t)n, sizeof *s->size);
    int ok = all && s->base && s->size, all_ok = 0;
    err = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (err == MPI_SUCCESS && all_ok) err = MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, comm);
    if (err != MPI_SUCCESS || !all_ok) {
        free(all);
        unmap_all(s);
        return err != MPI_SUCCESS ? err : MPI_ERR_NO_MEM;
    }
    char name[96];
    name_of(name, sizeof name, tag, me);
    int created = 0;
    if (mine) ok = (s->base[me] = map(name, (size_t)mine, 1, &created)) != NULL;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm); /* every segment exists */
    if (all_ok) {
        for (int i = 0; i < n; i++) {
            s->size[i] = (size_t)all[i];
            if (i == me || !all[i]) continue;
            char other[96];
            name_of(other, sizeof other, tag, i);
            if (!(s->base[i] = map(other, (size_t)all[i], 0, NULL))) ok = 0;
        }
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm); /* every process has mapped them */
    }
    s->size[me] = (size_t)mine; /* unmap_all needs it if this failed */
    if (created) shm_unlink(name);
    free(all);
    if (!all_ok) {
        unmap_all(s);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

void clampi_shared_segments_free(clampi_shared_segments *s) { unmap_all(s); }
