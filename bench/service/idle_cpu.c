/* CPU time a process spends while its program sleeps outside MPI for 2 s, with a UCX
 * window whose target side needs progress (UCX_TLS=tcp: clampi_progress=auto starts the
 * progress machinery). Prints user+sys CPU seconds of the whole process over the sleep. */
#include <clampi.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
static double cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}
int main(int argc, char **argv) {
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    CMPI_Win w;
    long *base;
    CMPI_Win_allocate(4096, 8, info, MPI_COMM_WORLD, &base, &w);
    CMPI_Win_lock_all(0, w);
    long v = me;
    CMPI_Put(&v, 1, MPI_LONG, 1 - me, me, 1, MPI_LONG, w);
    CMPI_Win_flush_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu();
    sleep(2);
    double c1 = cpu();
    printf("rank %d cpu_seconds_while_idle_2s=%.3f\n", me, c1 - c0);
    MPI_Barrier(MPI_COMM_WORLD);
    CMPI_Win_unlock_all(w);
    CMPI_Win_free(&w);
    MPI_Finalize();
    return 0;
}
