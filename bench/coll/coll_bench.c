/* coll_bench: latency of Alltoall and Allgather per block size, side by side in one run:
 *   mpi     the MPI library's MPI_Alltoall / MPI_Allgather
 *   naive   shared heap, each process copies one column (the paper's baseline)
 *   morton  shared heap, Morton-order schedule (CMPI_Alltoall / CMPI_Allgather)
 *   staged  Morton with buffers outside the heap (staged through scratch)
 *   clampi  CMPI_Alltoall / CMPI_Allgather as an application calls them (default path choice)
 *   flags   no data: each process raises its flag (one cache line of a shared window) and
 *           waits for every other's; the least any shared-memory collective must do, so
 *           the floor of morton's time at small blocks; across nodes, the floor of any
 *           hierarchical method (flags within a node, the leaders through the MPI's own
 *           collective); only with --variants
 * Buffers are rotated among several sets between iterations (footprint >= 64 MiB or at
 * least 4 sets) so caches are not artificially warm. Each iteration's latency is the
 * maximum over ranks; the table shows the median over iterations, in microseconds.
 *
 * usage: coll_bench [--min B] [--max B] [--factor F] [--iters N] [--ops alltoall,allgather]
 *                   [--variants mpi,naive,morton,staged] [--json FILE] [--label TEXT]
 *                   [--sets K] [--warmup W]
 * --iters fixes the iteration count for every size (e.g. under cachegrind).
 *
 * --b2b N: back-to-back mode, how applications call a collective: a trial is N calls in a
 * row with no barrier between them, rotating over --sets buffer sets (default 8); the
 * time per call is the trial time / N, the maximum over ranks; variants alternate trial by
 * trial (default mpi,clampi) and the table shows the median over --trials trials. */
#include <clampi/coll.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { V_MPI, V_NAIVE, V_MORTON, V_STAGED, V_CLAMPI, V_FLAGS, NV };
static const char *vname[NV] = {"mpi", "naive", "morton", "staged", "clampi", "flags"};
enum { OP_A2A, OP_AG, NOP };
static const char *opname[NOP] = {"alltoall", "allgather"};

static size_t parse_size(const char *s) {
    char *e;
    double v = strtod(s, &e);
    if (*e == 'K' || *e == 'k') v *= 1024;
    if (*e == 'M' || *e == 'm') v *= 1024 * 1024;
    return (size_t)v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The flags variant: one 64-byte line per process of a node in a shared window, a call
 * counter. On one node every process raises its line and waits for every other's. Across
 * nodes it is the floor of any hierarchical method: the node's processes raise their lines,
 * the node leader waits for them, exchanges the node's bytes with the other leaders through
 * the MPI's own collective (MPI_Allgather of node_size * B, MPI_Alltoall of node_size^2 * B
 * per leader pair), then raises a release line the others wait for; waits yield, as
 * clampi's hierarchical waits do, since nodes emulated on one host share its cores. */
static volatile uint64_t *flag_lines;
static uint64_t flag_calls;
static MPI_Comm flag_node, flag_leaders = MPI_COMM_NULL;
static int flag_me, flag_nsize, flag_nodes;
static char *flag_sbuf, *flag_rbuf;

static void flags_init(MPI_Comm comm, size_t bmax) {
    MPI_Win w;
    MPI_Aint sz;
    int du, P;
    void *base;
    MPI_Comm_size(comm, &P);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &flag_node);
    MPI_Comm_rank(flag_node, &flag_me);
    MPI_Comm_size(flag_node, &flag_nsize);
    flag_nodes = P / flag_nsize;
    MPI_Comm_split(comm, flag_me == 0 ? 0 : MPI_UNDEFINED, 0, &flag_leaders);
    if (flag_nodes > 1 && flag_me == 0) {
        size_t per = (size_t)flag_nsize * (size_t)flag_nsize * bmax;
        flag_sbuf = calloc((size_t)flag_nodes, per);
        flag_rbuf = calloc((size_t)flag_nodes, per);
    }
    MPI_Win_allocate_shared(flag_me == 0 ? 4096 * 8 : 0, 1, MPI_INFO_NULL, flag_node, &base, &w);
    MPI_Win_shared_query(w, 0, &sz, &du, &base);
    flag_lines = base;
    if (flag_me == 0) memset(base, 0, 4096 * 8);
    MPI_Barrier(comm); /* the window stays for the whole run */
}

static void flag_wait(int line, uint64_t n) {
    while (__atomic_load_n(&flag_lines[8 * line], __ATOMIC_ACQUIRE) < n)
        if (flag_nodes > 1) sched_yield();
}

static void flags_exchange(int op, size_t B) {
    uint64_t n = ++flag_calls;
    __atomic_store_n(&flag_lines[8 * flag_me], n, __ATOMIC_RELEASE);
    if (flag_nodes == 1) {
        for (int p = 0; p < flag_nsize; p++) flag_wait(p, n);
        return;
    }
    int release = flag_nsize; /* the line after the processes' */
    if (flag_me == 0) {
        for (int p = 1; p < flag_nsize; p++) flag_wait(p, n);
        int cnt = (int)((size_t)flag_nsize * B * (op == OP_A2A ? (size_t)flag_nsize : 1));
        if (op == OP_A2A)
            MPI_Alltoall(flag_sbuf, cnt, MPI_BYTE, flag_rbuf, cnt, MPI_BYTE, flag_leaders);
        else
            MPI_Allgather(flag_sbuf, cnt, MPI_BYTE, flag_rbuf, cnt, MPI_BYTE, flag_leaders);
        __atomic_store_n(&flag_lines[8 * release], n, __ATOMIC_RELEASE);
    } else
        flag_wait(release, n);
}

static int run(int op, int v, const void *s, void *r, int n, MPI_Comm comm) {
    if (v == V_FLAGS) {
        flags_exchange(op, (size_t)n);
        return MPI_SUCCESS;
    }
    CMPIX_Coll_algo algo = v == V_MPI      ? CMPIX_COLL_MPI
                           : v == V_NAIVE  ? CMPIX_COLL_NAIVE
                           : v == V_CLAMPI ? CMPIX_COLL_AUTO
                                           : CMPIX_COLL_MORTON;
    if (op == OP_A2A) return CMPIX_Alltoall_algo(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, algo);
    return CMPIX_Allgather_algo(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, algo);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    size_t bmin = 8, bmax = (size_t)1 << 20;
    int factor = 2, fixed_iters = 0, warmup = 3, sets_opt = 0;
    int use_op[NOP] = {1, 1}, use_v[NV] = {1, 1, 1, 1, 0}, b2b = 0, trials = 0, vset = 0;
    const char *json = NULL, *label = "";
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *b = argv[i + 1];
        if (!strcmp(a, "--min"))
            bmin = parse_size(b);
        else if (!strcmp(a, "--max"))
            bmax = parse_size(b);
        else if (!strcmp(a, "--factor"))
            factor = atoi(b);
        else if (!strcmp(a, "--iters"))
            fixed_iters = atoi(b);
        else if (!strcmp(a, "--warmup"))
            warmup = atoi(b);
        else if (!strcmp(a, "--sets"))
            sets_opt = atoi(b);
        else if (!strcmp(a, "--json"))
            json = b;
        else if (!strcmp(a, "--label"))
            label = b;
        else if (!strcmp(a, "--b2b"))
            b2b = atoi(b);
        else if (!strcmp(a, "--trials"))
            trials = atoi(b);
        else if (!strcmp(a, "--ops")) {
            for (int o = 0; o < NOP; o++) use_op[o] = strstr(b, opname[o]) != NULL;
        } else if (!strcmp(a, "--variants")) {
            for (int v = 0; v < NV; v++) use_v[v] = strstr(b, vname[v]) != NULL;
            vset = 1;
        }
    }
    if (factor < 2) factor = 2;
    if (b2b > 0) {
        if (!vset)
            for (int v = 0; v < NV; v++) use_v[v] = v == V_MPI || v == V_CLAMPI;
        if (sets_opt <= 0) sets_opt = 8;
        use_v[V_STAGED] = 0; /* heap buffers only */
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (use_v[V_FLAGS]) flags_init(comm, bmax);

    /* sets per size: footprint of one set over the node is 2 * P * P * B */
    int nsizes = 0;
    size_t sizes[64];
    int sets[64];
    size_t heap_need = 0;
    for (size_t b = bmin; b <= bmax && nsizes < 64; b *= (size_t)factor) {
        size_t set_bytes = 2 * (size_t)P * (size_t)P * b;
        size_t k = sets_opt > 0 ? (size_t)sets_opt : ((size_t)64 << 20) / set_bytes;
        if (sets_opt <= 0) {
            if (k < 4) k = 4;
            if (k > 512) k = 512;
        }
        sizes[nsizes] = b;
        sets[nsizes] = (int)k;
        size_t need = k * (2 * (size_t)P * b + 128);
        if (need > heap_need) heap_need = need;
        nsizes++;
    }
    if (CMPIX_Heap_init((MPI_Aint)(heap_need + ((size_t)8 << 20))) != MPI_SUCCESS) MPI_Abort(comm, 1);

    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    char *nl = strchr(version, '\n');
    if (nl) *nl = 0;
    for (char *c = version; *c; c++) /* JSON-safe */
        if ((unsigned char)*c < 32 || *c == '"' || *c == '\\') *c = ' ';
    FILE *jf = NULL;
    if (rank == 0 && json) {
        jf = fopen(json, "w");
        fprintf(jf,
                "{\n \"P\": %d, \"cpus\": %ld, \"oversubscribed\": %s, \"label\": \"%s\",\n \"mpi\": \"%s\",\n "
                "\"results\": [\n",
                P, ncpu, P > ncpu ? "true" : "false", label, version);
    }
    if (rank == 0)
        printf("# coll_bench P=%d on %ld cpus (%s) %s\n# %s\n", P, ncpu,
               P > ncpu ? "OVERSUBSCRIBED" : "not oversubscribed", label, version);
    int first_json = 1;
    for (int op = 0; op < NOP; op++) {
        if (!use_op[op]) continue;
        if (rank == 0) {
            printf("\n%-9s %9s %5s", opname[op], "bytes", "sets");
            for (int v = 0; v < NV; v++)
                if (use_v[v]) printf(" %10s", vname[v]);
            if (b2b > 0)
                printf(" %12s%s\n", "mpi/clampi", use_v[V_FLAGS] ? "    mpi/flags" : "");
            else if (use_v[V_FLAGS])
                printf(" %12s %12s %12s\n", "mpi/morton", "mpi/clampi", "mpi/flags");
            else
                printf(" %12s %12s %12s\n", "naive/morton", "mpi/morton", "mpi/staged");
        }
        for (int si = 0; si < nsizes; si++) {
            size_t B = sizes[si];
            int K = sets[si];
            int iters = fixed_iters > 0 ? fixed_iters : B <= 16384 ? 200 : B <= 262144 ? 60 : 20;
            if (P > ncpu && fixed_iters <= 0) iters = iters > 60 ? 60 : iters;
            if (b2b > 0) iters = trials > 0 ? trials : B <= 16384 ? 41 : 15;
            /* calls per back-to-back trial: b2b up to 64 KiB blocks, fewer above */
            int calls = b2b <= 0 ? 1 : B <= 65536 ? b2b : (int)((size_t)b2b * 65536 / B);
            if (b2b > 0 && calls < 8) calls = 8;
            size_t slen = op == OP_A2A ? (size_t)P * B : B, rlen = (size_t)P * B;
            char **hs = malloc(sizeof(char *) * (size_t)K), **hr = malloc(sizeof(char *) * (size_t)K);
            char **ms = malloc(sizeof(char *) * (size_t)K), **mr = malloc(sizeof(char *) * (size_t)K);
            for (int k = 0; k < K; k++) {
                CMPI_Alloc_mem((MPI_Aint)slen, MPI_INFO_NULL, &hs[k]);
                CMPI_Alloc_mem((MPI_Aint)rlen, MPI_INFO_NULL, &hr[k]);
                memset(hs[k], rank + k, slen);
                memset(hr[k], 0, rlen);
                if (use_v[V_STAGED]) {
                    ms[k] = malloc(slen);
                    mr[k] = malloc(rlen);
                    memset(ms[k], rank + k, slen);
                    memset(mr[k], 0, rlen);
                }
            }
            double *t[NV];
            for (int v = 0; v < NV; v++) t[v] = calloc((size_t)iters, sizeof(double));
            /* warm-up: every variant once over every set, so page-table entries for the
             * peers' heap pages exist (first touches fault in each process) */
            int wu = warmup + (fixed_iters > 0 || b2b > 0 ? 0 : K);
            int it_total = wu + iters, set = 0;
            for (int it = 0; it < it_total; it++) {
                for (int vi = 0; vi < NV; vi++) { /* variants interleaved, order rotated */
                    int v = (vi + it) % NV;
                    if (!use_v[v]) continue;
                    const char *s = v == V_STAGED ? ms[set] : hs[set];
                    char *r = v == V_STAGED ? mr[set] : hr[set];
                    MPI_Barrier(comm);
                    double t0 = MPI_Wtime();
                    if (b2b > 0) { /* N calls in a row over the rotating sets, no barrier */
                        for (int c = 0; c < calls; c++) {
                            int k = (set + c) % K;
                            run(op, v, v == V_STAGED ? ms[k] : hs[k], v == V_STAGED ? mr[k] : hr[k], (int)B, comm);
                        }
                    } else
                        run(op, v, s, r, (int)B, comm);
                    double dt = (MPI_Wtime() - t0) / calls;
                    if (it >= wu) t[v][it - wu] = dt;
                }
                set = (set + 1) % K;
            }
            double med[NV] = {0};
            for (int v = 0; v < NV; v++) {
                if (!use_v[v]) continue;
                MPI_Allreduce(MPI_IN_PLACE, t[v], iters, MPI_DOUBLE, MPI_MAX, comm);
                qsort(t[v], (size_t)iters, sizeof(double), cmp_double);
                med[v] = t[v][iters / 2] * 1e6;
            }
            if (rank == 0) {
                printf("%-9s %9zu %5d", "", B, K);
                for (int v = 0; v < NV; v++)
                    if (use_v[v]) printf(" %10.2f", med[v]);
                if (b2b > 0) {
                    printf(" %12.2f", med[V_CLAMPI] > 0 ? med[V_MPI] / med[V_CLAMPI] : 0);
                    if (use_v[V_FLAGS]) printf(" %12.2f", med[V_MPI] / med[V_FLAGS]);
                    printf("\n");
                } else if (use_v[V_FLAGS])
                    printf(" %12.2f %12.2f %12.2f\n", med[V_MORTON] > 0 ? med[V_MPI] / med[V_MORTON] : 0,
                           med[V_CLAMPI] > 0 ? med[V_MPI] / med[V_CLAMPI] : 0, med[V_MPI] / med[V_FLAGS]);
                else
                    printf(" %12.2f %12.2f %12.2f\n", med[V_MORTON] > 0 ? med[V_NAIVE] / med[V_MORTON] : 0,
                           med[V_MORTON] > 0 ? med[V_MPI] / med[V_MORTON] : 0,
                           med[V_STAGED] > 0 ? med[V_MPI] / med[V_STAGED] : 0);
                fflush(stdout);
                if (jf) {
                    fprintf(jf, "%s  {\"op\": \"%s\", \"bytes\": %zu, \"sets\": %d, \"iters\": %d, \"b2b_calls\": %d",
                            first_json ? "" : ",\n", opname[op], B, K, iters, b2b > 0 ? calls : 0);
                    for (int v = 0; v < NV; v++)
                        if (use_v[v]) fprintf(jf, ", \"%s_us\": %.3f", vname[v], med[v]);
                    fprintf(jf, "}");
                    first_json = 0;
                }
            }
            for (int v = 0; v < NV; v++) free(t[v]);
            for (int k = 0; k < K; k++) {
                CMPI_Free_mem(hs[k]);
                CMPI_Free_mem(hr[k]);
                if (use_v[V_STAGED]) {
                    free(ms[k]);
                    free(mr[k]);
                }
            }
            free(hs);
            free(hr);
            free(ms);
            free(mr);
        }
    }
    CMPIX_Coll_stats cs;
    CMPIX_Coll_get_stats(&cs);
    if (jf) {
        fprintf(jf, "\n ]\n}\n");
        fclose(jf);
    }
    if (rank == 0)
        printf("\n# rank 0 paths: direct %lu staged %lu eager %lu hierarchical %lu delegated %lu\n", cs.direct,
               cs.staged, cs.eager, cs.hierarchical, cs.delegated);
    MPI_Finalize();
    return 0;
}
