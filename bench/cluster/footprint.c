/* What one process holds after it has used a part of clampi: resident memory (VmRSS), open
 * sockets and file descriptors, measured by each rank on itself after the work and a
 * barrier, gathered by rank 0. A plain MPI program: run plainly and under the preload
 * (bench/cluster/footprint.sh). Every part talks to the ring neighbours only, so what grows
 * with the ranks talked to and what grows with the job's size can be told apart.
 *   footprint PART   PART: init | rma | coll | p2p | all
 * Prints: footprint part=P np=N rss_kb_min=.. rss_kb_median=.. rss_kb_max=.. sockets_min=..
 *         sockets_median=.. sockets_max=.. fds_median=.. */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

static void count_fds(long *sockets, long *fds) {
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], target[256];
    *sockets = *fds = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        (*fds)++;
        if (strncmp(target, "socket:", 7) == 0) (*sockets)++;
    }
    if (d) closedir(d);
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void summary(const char *name, long mine, int rank, int np, long out[3]) {
    long *all = rank == 0 ? malloc(sizeof(long) * (size_t)np) : NULL;
    MPI_Gather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)np, sizeof(long), cmp_long);
        out[0] = all[0], out[1] = all[np / 2], out[2] = all[np - 1];
        free(all);
    }
    (void)name;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *part = argc > 1 ? argv[1] : "init";
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int right = (rank + 1) % np, left = (rank + np - 1) % np, all = strcmp(part, "all") == 0;
    if (all || strcmp(part, "rma") == 0) { /* a window, gets from both neighbours */
        double *base, buf[64];
        MPI_Win win;
        MPI_Win_allocate(1 << 20, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < 20; i++) {
            MPI_Get(buf, 64, MPI_DOUBLE, right, 64 * (i % 4), 64, MPI_DOUBLE, win);
            MPI_Get(buf, 64, MPI_DOUBLE, left, 64 * (i % 4), 64, MPI_DOUBLE, win);
            MPI_Win_flush_all(win);
        }
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&win);
    }
    if (all || strcmp(part, "coll") == 0) { /* MPI_Alloc_mem + alltoall/allgather (every peer) */
        int *s, *r;
        MPI_Alloc_mem((MPI_Aint)np * 16 * sizeof(int), MPI_INFO_NULL, &s);
        MPI_Alloc_mem((MPI_Aint)np * 16 * sizeof(int), MPI_INFO_NULL, &r);
        for (int i = 0; i < np * 16; i++) s[i] = rank + i;
        for (int i = 0; i < 5; i++) {
            MPI_Alltoall(s, 16, MPI_INT, r, 16, MPI_INT, MPI_COMM_WORLD);
            MPI_Allgather(s, 16, MPI_INT, r, 16, MPI_INT, MPI_COMM_WORLD);
        }
        MPI_Free_mem(s);
        MPI_Free_mem(r);
    }
    if (all || strcmp(part, "p2p") == 0) { /* point-to-point with the ring neighbours only */
        int out[256], in[256];
        MPI_Request q[2];
        for (int i = 0; i < 50; i++) {
            MPI_Irecv(in, 256, MPI_INT, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(out, 256, MPI_INT, right, i, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long sockets, fds, rss = rss_kb(), r3[3], s3[3], f3[3];
    count_fds(&sockets, &fds);
    summary("rss", rss, rank, np, r3);
    summary("sockets", sockets, rank, np, s3);
    summary("fds", fds, rank, np, f3);
    if (rank == 0)
        printf("footprint part=%s np=%d rss_kb_min=%ld rss_kb_median=%ld rss_kb_max=%ld sockets_min=%ld "
               "sockets_median=%ld sockets_max=%ld fds_median=%ld\n",
               part, np, r3[0], r3[1], r3[2], s3[0], s3[1], s3[2], f3[1]);
    MPI_Finalize();
    return 0;
}
