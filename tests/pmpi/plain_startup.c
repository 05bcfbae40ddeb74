/* What the preload's start-up does to a program that only starts and stops MPI:
 *  - "startup rank=R msync=N": the msync calls made in MPI_Init, counted by defining msync
 *    here (the executable's symbol comes first). MPICH 4 probes each page of a shared
 *    window's range with msync when it tries to map it at one address in every process;
 *    clampi's node-shared heap (256 MiB per process) asks MPICH not to, so a preloaded
 *    MPI_Init makes a few calls, not one per page of the node's heap;
 *  - "result thread ...": the thread level MPI_Query_thread reports after MPI_Init_thread
 *    with MPI_THREAD_MULTIPLE (Open MPI lowers it to the level any MPI_T_init_thread asks
 *    for: clampi's asked for MPI_THREAD_SINGLE, and read back 0 where plain reads 3);
 *  - "result mpit ...": the program's own MPI_T use after MPI_Init finds MPICH's control
 *    variable by name and reads the value the environment gave it (clampi sets it only
 *    around its own allocation, and does not finalize MPI_T, which on MPICH 4.0 loses
 *    every name). The same line plainly and preloaded (run_preload.sh). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <sys/mman.h>

static unsigned long msyncs;

int msync(void *addr, size_t len, int flags) {
    static int (*real)(void *, size_t, int);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "msync");
    msyncs++;
    return real(addr, len, flags);
}

int main(int argc, char **argv) {
    int provided, level;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    unsigned long in_init = msyncs;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("startup rank=%d msync=%lu\n", rank, in_init);
    MPI_Query_thread(&level);
    printf("result thread rank=%d provided=%d query=%d\n", rank, provided, level);

    int index;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index("MPIR_CVAR_SHM_SYMHEAP_RETRY", &index) == MPI_SUCCESS) {
        MPI_T_cvar_handle h;
        int count, value = -1;
        MPI_T_cvar_handle_alloc(index, NULL, &h, &count);
        MPI_T_cvar_read(h, &value);
        MPI_T_cvar_handle_free(&h);
        printf("result mpit rank=%d SHM_SYMHEAP_RETRY=%d\n", rank, value);
    } else {
        printf("result mpit rank=%d SHM_SYMHEAP_RETRY=none\n", rank);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
