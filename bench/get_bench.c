/* Get microbenchmark: plain MPI_Get + MPI_Win_flush against CMPI_Get + CMPI_Win_flush,
 * side by side in one run. Rank 0 reads from rank 1; other ranks only wait.
 *
 * Patterns (the same sequence of (offset, size) for both):
 *   hit      the same block again and again
 *   miss     always a new block
 *   skewed   Zipf(1) reuse over up to 4096 blocks
 *   subrange each of 4 large blocks (64 KiB) fetched once, then random sub-ranges
 * Each cell runs TRIALS alternating trials (baseline, clampi, baseline, ...) and
 * reports the median time per get; the clampi cache is invalidated before each of its
 * trials, so every trial starts cold. An untimed pass first checks every byte both
 * received against the target's known contents.
 *
 * Usage: get_bench [--label NAME] [--json FILE] [--ops N] [--trials N] [--max-size BYTES] */
#include <clampi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_BYTES (64u << 20)
#define LARGE_BLOCK (64u << 10)

static int rank;

typedef struct op {
    uint64_t off;
    uint32_t len;
} op;

static unsigned char content(uint64_t i) { return (unsigned char)(i * 7 + (i >> 8) * 13 + (i >> 16)); }

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Builds the op sequence of a pattern; returns how many ops. */
static int make_pattern(const char *pattern, uint32_t size, int nops, op *ops) {
    uint64_t nblocks = WIN_BYTES / size;
    if (!strcmp(pattern, "hit")) {
        for (int i = 0; i < nops; i++) ops[i] = (op){0, size};
    } else if (!strcmp(pattern, "miss")) {
        if ((uint64_t)nops > nblocks) nops = (int)nblocks;
        for (int i = 0; i < nops; i++) ops[i] = (op){(uint64_t)i * size, size};
    } else if (!strcmp(pattern, "skewed")) {
        uint64_t n = nblocks < 4096 ? nblocks : 4096;
        double *cdf = malloc(n * sizeof *cdf), sum = 0;
        for (uint64_t k = 0; k < n; k++) cdf[k] = (sum += 1.0 / (double)(k + 1));
        for (int i = 0; i < nops; i++) {
            double u = (double)(rnd() >> 11) / 9007199254740992.0 * sum;
            uint64_t lo = 0, hi = n - 1;
            while (lo < hi) {
                uint64_t mid = (lo + hi) / 2;
                if (cdf[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            /* spread popular blocks over the window */
            uint64_t block = (lo * 2654435761u) % n;
            ops[i] = (op){block * size, size};
        }
        free(cdf);
    } else { /* subrange */
        uint32_t large = size > LARGE_BLOCK ? size : LARGE_BLOCK;
        for (int i = 0; i < nops; i++) {
            uint64_t b = (i < 4 ? (uint64_t)i : rnd() % 4) * large * 2;
            if (i < 4) {
                ops[i] = (op){b, large};
                continue;
            }
            uint64_t within = (rnd() % (large - size + 1)) & ~(uint64_t)7;
            ops[i] = (op){b + within, size};
        }
    }
    return nops;
}

static double run_plain(MPI_Win w, const op *ops, int n, unsigned char *buf) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Get(buf, (int)ops[i].len, MPI_BYTE, 1, (MPI_Aint)ops[i].off, (int)ops[i].len, MPI_BYTE, w);
        MPI_Win_flush(1, w);
    }
    return MPI_Wtime() - t0;
}

static double run_clampi(CMPI_Win w, const op *ops, int n, unsigned char *buf) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        CMPI_Get(buf, (int)ops[i].len, MPI_BYTE, 1, (MPI_Aint)ops[i].off, (int)ops[i].len, MPI_BYTE, w);
        CMPI_Win_flush(1, w);
    }
    return MPI_Wtime() - t0;
}

/* Untimed: every byte each get returns is what the target holds. */
static void verify(MPI_Win pw, CMPI_Win cw, const op *ops, int n, unsigned char *buf) {
    for (int i = 0; i < n; i++) {
        for (int v = 0; v < 2; v++) {
            memset(buf, 0, ops[i].len);
            if (v == 0) {
                MPI_Get(buf, (int)ops[i].len, MPI_BYTE, 1, (MPI_Aint)ops[i].off, (int)ops[i].len, MPI_BYTE, pw);
                MPI_Win_flush(1, pw);
            } else {
                CMPI_Get(buf, (int)ops[i].len, MPI_BYTE, 1, (MPI_Aint)ops[i].off, (int)ops[i].len, MPI_BYTE, cw);
                CMPI_Win_flush(1, cw);
            }
            for (uint32_t k = 0; k < ops[i].len; k++)
                if (buf[k] != content(ops[i].off + k)) {
                    fprintf(stderr, "get_bench: WRONG DATA (%s) op %d offset %llu byte %u\n", v ? "clampi" : "plain", i,
                            (unsigned long long)ops[i].off, k);
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
        }
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *label = "run", *json = NULL;
    int nops = 2000, trials = 5;
    uint32_t max_size = 65536;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--label"))
            label = argv[i + 1];
        else if (!strcmp(argv[i], "--json"))
            json = argv[i + 1];
        else if (!strcmp(argv[i], "--ops"))
            nops = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--trials"))
            trials = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-size"))
            max_size = (uint32_t)atoi(argv[i + 1]);
    }
    if (nranks < 2) {
        if (rank == 0) fprintf(stderr, "get_bench: needs at least 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    unsigned char *pbase, *cbase;
    MPI_Win pw;
    MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &pbase, &pw);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, CLAMPI_ALWAYS_CACHE);
    MPI_Info_set(info, CLAMPI_BUFFER_SIZE, "128M");
    MPI_Info_set(info, CLAMPI_INDEX_SIZE, "65536");
    CMPI_Win cw;
    if (CMPI_Win_allocate(WIN_BYTES, 1, info, MPI_COMM_WORLD, &cbase, &cw) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Info_free(&info);
    for (uint64_t i = 0; i < WIN_BYTES; i++) pbase[i] = cbase[i] = content(i);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, pw);
    CMPI_Win_lock_all(0, cw);

    FILE *jf = NULL;
    if (rank == 0) {
        if (json && !(jf = fopen(json, "w"))) {
            perror(json);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (jf)
            fprintf(jf, "{\"label\": \"%s\", \"ranks\": %d, \"ops\": %d, \"trials\": %d, \"results\": [\n", label,
                    nranks, nops, trials);
        printf("# get_bench %s: median time per get+flush (us), %d ops x %d trials, rank 0 -> rank 1\n", label, nops,
               trials);
        printf("%-9s %8s %12s %12s %9s %8s %8s %8s\n", "pattern", "size", "MPI_Get", "CMPI_Get", "speedup", "hits",
               "misses", "direct");
    }
    const char *patterns[] = {"hit", "miss", "skewed", "subrange"};
    op *ops = malloc((size_t)nops * sizeof *ops);
    unsigned char *buf = malloc(LARGE_BLOCK > max_size ? LARGE_BLOCK : max_size);
    int first = 1;
    for (int p = 0; p < 4; p++) {
        static const uint32_t sizes[] = {8, 64, 512, 4096, 16384, 65536};
        for (int si = 0; si < 6 && sizes[si] <= max_size; si++) {
            uint32_t sz = sizes[si];
            rng = 88172645463325252ull + sz;
            int n = make_pattern(patterns[p], sz, nops, ops);
            if (rank == 0) {
                CMPI_Win_invalidate(cw);
                verify(pw, cw, ops, n < 200 ? n : 200, buf);
                double tp[64], tc[64];
                CMPI_Win_stats s0, s1;
                CMPI_Win_get_stats(cw, &s0);
                for (int t = 0; t < trials && t < 64; t++) {
                    tp[t] = run_plain(pw, ops, n, buf) / n * 1e6;
                    CMPI_Win_invalidate(cw);
                    tc[t] = run_clampi(cw, ops, n, buf) / n * 1e6;
                }
                CMPI_Win_get_stats(cw, &s1);
                double mp = median(tp, trials), mc = median(tc, trials);
                unsigned long long hits = s1.hits - s0.hits, misses = s1.misses - s0.misses,
                                   direct = s1.direct - s0.direct;
                printf("%-9s %8u %12.3f %12.3f %8.2fx %8llu %8llu %8llu\n", patterns[p], sz, mp, mc, mp / mc, hits,
                       misses, direct);
                fflush(stdout);
                if (jf)
                    fprintf(jf,
                            "%s  {\"pattern\": \"%s\", \"size\": %u, \"mpi_us\": %.4f, \"clampi_us\": %.4f, "
                            "\"speedup\": %.4f, "
                            "\"hits\": %llu, \"misses\": %llu, \"direct\": %llu}",
                            first ? "" : ",\n", patterns[p], sz, mp, mc, mp / mc, hits, misses, direct);
                first = 0;
            }
        }
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    MPI_Win_unlock_all(pw);
    CMPI_Win_unlock_all(cw);
    MPI_Barrier(MPI_COMM_WORLD);
    CMPI_Win_free(&cw);
    MPI_Win_free(&pw);
    free(ops);
    free(buf);
    MPI_Finalize();
    return 0;
}
