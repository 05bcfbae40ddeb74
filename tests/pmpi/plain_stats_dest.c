/* CLAMPI_STATS_DEST=file:PATH under the preload: each process's statistics line goes to its
 * own file (%r: its rank), whole, and not to the program's output (the test's regex fails on
 * a stats line in stdout or stderr). A plain MPI program: one window, one get, freed.
 * Usage: plain_stats_dest [check]  (check: read this rank's file back and judge it) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* CLAMPI_STATS_DEST's path with %r replaced by rank; NULL if it is not file:PATH */
static char *own_file(int rank) {
    const char *v = getenv("CLAMPI_STATS_DEST");
    if (!v || strncmp(v, "file:", 5) != 0) return NULL;
    static char path[4096];
    size_t n = 0;
    for (const char *c = v + 5; *c && n < sizeof path - 16; c++) {
        if (c[0] == '%' && c[1] == 'r') {
            n += (size_t)snprintf(path + n, sizeof path - n, "%d", rank);
            c++;
        } else {
            path[n++] = *c;
        }
    }
    path[n] = '\0';
    return path;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int check = argc > 1 && !strcmp(argv[1], "check");
    char *path = check ? own_file(rank) : NULL;
    if (check && !path) {
        printf("FAIL: CLAMPI_STATS_DEST is not file:PATH\n");
        bad = 1;
    }
    if (path) unlink(path); /* a line from an earlier run would count */
    MPI_Barrier(MPI_COMM_WORLD);

    double *base, x = 0;
    MPI_Win win;
    MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_name(win, "stats_dest_win");
    for (int i = 0; i < 64; i++) base[i] = rank * 100 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Get(&x, 1, MPI_DOUBLE, (rank + 1) % size, 3, 1, MPI_DOUBLE, win);
    MPI_Win_flush((rank + 1) % size, win);
    MPI_Win_unlock_all(win);
    if (x != ((rank + 1) % size) * 100 + 3) {
        printf("FAIL: rank %d read %g\n", rank, x);
        bad = 1;
    }
    MPI_Win_free(&win); /* the statistics line is written here */

    if (path) {
        char text[8192] = "", want[64];
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[n] = '\0';
        snprintf(want, sizeof want, "clampi: rank=%d win=stats_dest_win ", rank);
        char *nl = strchr(text, '\n');
        if (!f || strncmp(text, want, strlen(want)) != 0 || !nl || nl[1] != '\0' || !strstr(text, " gets=")) {
            printf("FAIL: rank %d: %s holds \"%s\", expected one line starting \"%s\"\n", rank, path, text, want);
            bad = 1;
        }
        unlink(path);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf(bad ? "stats_dest: FAIL\n" : "stats_dest: ok\n");
    MPI_Finalize();
    return bad;
}
