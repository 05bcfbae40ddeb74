/* Plain MPI RMA programs (no clampi calls) for the transparent preload: each pattern
 * prints deterministic "result ..." lines; tests/pmpi/run_preload.sh runs a pattern with
 * and without LD_PRELOAD=libclampi_pmpi.so and requires identical lines.
 * Usage: plain_rma PATTERN [ITERS]
 * Patterns: lock_flush lock_all fence pscw dynamic shared dtype rget accumulate mutex
 *           counter contended readonly infokey dynamic_optin */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
static int me, np, iters = 3;

static int value(int rank, int i, int gen) { return rank * 100000 + i * 7 + gen * 13; }

static void result(const char *what, long long v) { printf("result rank=%d %s=%lld\n", me, what, v); }

#include "plain_check.h"

/* Reads N ints of target `reps` times in one flush interval: duplicates of gets in flight. */
static long long read_target(MPI_Win win, int t, MPI_Aint base_disp) {
    static int buf[4][N];
    long long sum = 0;
    for (int rep = 0; rep < 3; rep++)
        for (int i = 0; i < N; i += 3) CHECK(MPI_Get(&buf[rep][i], 1, MPI_INT, t, base_disp + i, 1, MPI_INT, win));
    CHECK(MPI_Win_flush(t, win));
    for (int rep = 0; rep < 3; rep++)
        for (int i = 0; i < N; i += 3) sum += buf[rep][i] * (long long)(rep + 1);
    return sum;
}

static void fill(int *mem, int gen) {
    for (int i = 0; i < N; i++) mem[i] = value(me, i, gen);
}

/* lock/flush/unlock, writes with an exclusive lock, reads again. */
static void lock_flush(void) {
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    fill(mem, 0);
    CHECK(MPI_Win_unlock(me, win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < iters; it++) {
        long long sum = 0;
        for (int t = 0; t < np; t++) {
            CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            sum += read_target(win, t, 0);
            sum += read_target(win, t, 0); /* after a flush: fresh */
            CHECK(MPI_Win_unlock(t, win));
        }
        result("sum", sum);
        MPI_Barrier(MPI_COMM_WORLD);
        /* each rank rewrites part of its right neighbour's window */
        int right = (me + 1) % np, vals[16];
        for (int i = 0; i < 16; i++) vals[i] = value(me, i, it + 1);
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        CHECK(MPI_Put(vals, 16, MPI_INT, right, 3 * it, 16, MPI_INT, win));
        CHECK(MPI_Win_unlock(right, win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK(MPI_Win_free(&win));
}

/* lock_all, flush_all, flush_local_all, flush_local; puts to self and others. */
static void lock_all(void) {
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    fill(mem, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++) {
        long long sum = 0;
        for (int t = 0; t < np; t++) sum += read_target(win, t, 0);
        int tmp[8];
        for (int t = 0; t < np; t++) {
            CHECK(MPI_Get(tmp, 8, MPI_INT, t, 8, 8, MPI_INT, win));
            CHECK(MPI_Win_flush_local(t, win));
            for (int i = 0; i < 8; i++) sum += tmp[i];
        }
        CHECK(MPI_Get(tmp, 8, MPI_INT, (me + 1) % np, 16, 8, MPI_INT, win));
        CHECK(MPI_Win_flush_local_all(win));
        for (int i = 0; i < 8; i++) sum += tmp[i];
        result("sum", sum);
        MPI_Barrier(MPI_COMM_WORLD);
        int v = value(me, 0, it + 5);
        CHECK(MPI_Put(&v, 1, MPI_INT, (me + 1) % np, it, 1, MPI_INT, win));
        CHECK(MPI_Win_flush_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(MPI_Win_sync(win));
    }
    CHECK(MPI_Win_unlock_all(win));
    CHECK(MPI_Win_free(&win));
}

/* Active target with fences, window over user memory. */
static void fence(void) {
    int *mem = malloc(N * sizeof(int));
    MPI_Win win;
    fill(mem, 0);
    CHECK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(MPI_Win_fence(0, win));
    static int buf[4][N];
    for (int it = 0; it < iters; it++) {
        long long sum = 0;
        int t = (me + it) % np;
        for (int rep = 0; rep < 4; rep++) CHECK(MPI_Get(buf[rep], N, MPI_INT, t, 0, N, MPI_INT, win));
        CHECK(MPI_Win_fence(0, win));
        for (int rep = 0; rep < 4; rep++)
            for (int i = 0; i < N; i++) sum += buf[rep][i] * (long long)(i % 5);
        result("sum", sum);
        int v[4] = {value(me, 1, it), value(me, 2, it), value(me, 3, it), value(me, 4, it)};
        CHECK(MPI_Put(v, 4, MPI_INT, (me + 1) % np, 4 * me % (N - 4), 4, MPI_INT, win));
        CHECK(MPI_Win_fence(0, win));
    }
    CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(MPI_Win_free(&win));
    free(mem);
}

/* Post/start/complete/wait on a ring: read the left neighbour, then write to it. */
static void pscw(void) {
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    fill(mem, 0);
    MPI_Group world, left_g, right_g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int left = (me + np - 1) % np, right = (me + 1) % np;
    MPI_Group_incl(world, 1, &left, &left_g);
    MPI_Group_incl(world, 1, &right, &right_g);
    MPI_Barrier(MPI_COMM_WORLD);
    static int buf[3][N];
    for (int it = 0; it < iters; it++) {
        /* I access my left neighbour; my right neighbour accesses me. */
        CHECK(MPI_Win_post(right_g, 0, win));
        CHECK(MPI_Win_start(left_g, 0, win));
        for (int rep = 0; rep < 3; rep++) CHECK(MPI_Get(buf[rep], N / 2, MPI_INT, left, rep, N / 2, MPI_INT, win));
        CHECK(MPI_Win_complete(win));
        int flag = 0;
        while (!flag) CHECK(MPI_Win_test(win, &flag));
        long long sum = 0;
        for (int rep = 0; rep < 3; rep++)
            for (int i = 0; i < N / 2; i++) sum += buf[rep][i] ^ i;
        result("sum", sum);
        CHECK(MPI_Win_post(right_g, 0, win));
        CHECK(MPI_Win_start(left_g, 0, win));
        int v = value(me, it, it);
        CHECK(MPI_Put(&v, 1, MPI_INT, left, it, 1, MPI_INT, win));
        CHECK(MPI_Win_complete(win));
        CHECK(MPI_Win_wait(win));
    }
    MPI_Group_free(&left_g);
    MPI_Group_free(&right_g);
    MPI_Group_free(&world);
    CHECK(MPI_Win_free(&win));
}

/* Dynamic window: absolute addresses; memory detached and other memory attached. */
static void dynamic(void) {
    MPI_Win win;
    CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Aint *addr = malloc(np * sizeof *addr);
    for (int gen = 0; gen < iters; gen++) {
        int *mem = malloc(N * sizeof(int));
        fill(mem, gen);
        CHECK(MPI_Win_attach(win, mem, N * sizeof(int)));
        MPI_Aint mine;
        MPI_Get_address(mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
        CHECK(MPI_Win_lock_all(0, win));
        long long sum = 0;
        for (int t = 0; t < np; t++) {
            static int buf[3][N];
            for (int rep = 0; rep < 3; rep++) CHECK(MPI_Get(buf[rep], N, MPI_INT, t, addr[t], N, MPI_INT, win));
            CHECK(MPI_Win_flush(t, win));
            for (int rep = 0; rep < 3; rep++)
                for (int i = 0; i < N; i++) sum += buf[rep][i];
        }
        CHECK(MPI_Win_unlock_all(win));
        result("sum", sum);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(MPI_Win_detach(win, mem));
        free(mem);
    }
    free(addr);
    CHECK(MPI_Win_free(&win));
}

/* Dynamic window whose program opts in to caching by info key (plain strings): memory
 * stays attached for the window's lifetime, so always_cache is correct. */
static void dynamic_optin(void) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_mode", "always_cache");
    MPI_Info_set(info, "clampi_dynamic_cache", "true");
    MPI_Win win;
    CHECK(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    int *mem = malloc(N * sizeof(int));
    fill(mem, 0);
    CHECK(MPI_Win_attach(win, mem, N * sizeof(int)));
    MPI_Aint *addr = malloc(np * sizeof *addr), mine;
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        CHECK(MPI_Win_lock_all(0, win));
        for (int t = 0; t < np; t++) {
            int buf[N];
            for (int i = 0; i < N; i += 16)
                CHECK(MPI_Get(&buf[i], 16, MPI_INT, t, addr[t] + i * (MPI_Aint)sizeof(int), 16, MPI_INT, win));
            CHECK(MPI_Win_flush(t, win));
            for (int i = 0; i < N; i++) sum += buf[i] * (long long)(it + 1);
        }
        CHECK(MPI_Win_unlock_all(win));
    }
    result("sum", sum);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_detach(win, mem));
    CHECK(MPI_Win_free(&win));
    free(mem);
    free(addr);
}

/* Shared-memory window: stores by the owner, MPI_Win_sync + barrier, gets by others. */
static void shared(void) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nme, nnp;
    MPI_Comm_rank(node, &nme);
    MPI_Comm_size(node, &nnp);
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win));
    CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++) {
        fill(mem, it);
        CHECK(MPI_Win_sync(win));
        MPI_Barrier(node);
        CHECK(MPI_Win_sync(win));
        long long sum = 0;
        for (int t = 0; t < nnp; t++) {
            int buf[N];
            CHECK(MPI_Get(buf, N, MPI_INT, t, 0, N, MPI_INT, win));
            CHECK(MPI_Win_flush(t, win));
            for (int i = 0; i < N; i++) sum += buf[i];
        }
        result("sum", sum);
        MPI_Barrier(node);
    }
    CHECK(MPI_Win_unlock_all(win));
    CHECK(MPI_Win_free(&win));
    MPI_Comm_free(&node);
}

/* Derived datatypes: contiguous (cacheable), vector (non-contiguous target), indexed
 * origin (scattered from the same bytes). */
static void dtype(void) {
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    fill(mem, 0);
    MPI_Datatype four, vec, idx;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_vector(8, 2, 5, MPI_INT, &vec);
    int bl[3] = {2, 1, 5}, dis[3] = {0, 4, 9};
    MPI_Type_indexed(3, bl, dis, MPI_INT, &idx);
    MPI_Type_commit(&four);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&idx);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++) {
        long long sum = 0;
        for (int t = 0; t < np; t++) {
            int a[3][16], b[3][40], c[3][16];
            memset(b, 0, sizeof b);
            memset(c, 0, sizeof c);
            for (int rep = 0; rep < 3; rep++) {
                CHECK(MPI_Get(a[rep], 4, four, t, 10 + it, 4, four, win));   /* 16 ints */
                CHECK(MPI_Get(b[rep], 16, MPI_INT, t, 20, 1, vec, win));     /* 16 ints, strided */
                CHECK(MPI_Get(c[rep], 1, idx, t, 12 + it, 8, MPI_INT, win)); /* scattered origin */
            }
            CHECK(MPI_Win_flush(t, win));
            for (int rep = 0; rep < 3; rep++) {
                for (int i = 0; i < 16; i++) sum += (a[rep][i] + 3LL * c[rep][i]) * (i + 1);
                for (int i = 0; i < 40; i++) sum += b[rep][i] * 5LL * (i + 1);
            }
        }
        result("sum", sum);
    }
    CHECK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&four);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    CHECK(MPI_Win_free(&win));
}

/* Read-only table named "graph" (CLAMPI_WINDOW_MODES=graph:always_cache caches it across
 * epochs), read with MPI_Get and MPI_Rget + MPI_Wait/MPI_Test/MPI_Waitall. */
static void readonly(int use_rget) {
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK(MPI_Win_set_name(win, "graph"));
    fill(mem, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        CHECK(MPI_Win_lock_all(0, win));
        for (int t = 0; t < np; t++) {
            int buf[N];
            if (use_rget && it > 0) { /* the first epoch fills the cache with MPI_Get */
                MPI_Request req[N / 8];
                for (int i = 0; i < N / 8; i++)
                    CHECK(MPI_Rget(&buf[i * 8], 8, MPI_INT, t, i * 8, 8, MPI_INT, win, &req[i]));
                CHECK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
                int flag = 0;
                while (!flag) CHECK(MPI_Test(&req[1], &flag, MPI_STATUS_IGNORE));
                CHECK(MPI_Waitall(N / 8, req, MPI_STATUSES_IGNORE)); /* the first two are null now */
            } else {
                for (int i = 0; i < N / 8; i++) CHECK(MPI_Get(&buf[i * 8], 8, MPI_INT, t, i * 8, 8, MPI_INT, win));
                CHECK(MPI_Win_flush(t, win));
            }
            for (int i = 0; i < N; i++) sum += buf[i] * (long long)(it + 1);
        }
        CHECK(MPI_Win_unlock_all(win));
    }
    result("sum", sum);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_free(&win));
}

/* The CMPI info key on a plain MPI_Win_create (plain strings: no clampi header), read
 * back with MPI_Win_get_info, then switched off with MPI_Win_set_info. */
static void infokey(void) {
    int *mem = malloc(N * sizeof(int));
    fill(mem, 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_mode", "always_cache");
    MPI_Win win;
    CHECK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    MPI_Info used;
    CHECK(MPI_Win_get_info(win, &used));
    char v[64] = "(none)";
    int flag = 0;
    MPI_Info_get(used, "clampi_mode", 63, v, &flag);
    printf("info rank=%d clampi_mode=%s\n", me, v);
    MPI_Info_free(&used);
    MPI_Barrier(MPI_COMM_WORLD);
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        CHECK(MPI_Win_lock_all(0, win));
        for (int t = 0; t < np; t++) sum += read_target(win, t, 0);
        CHECK(MPI_Win_unlock_all(win));
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_mode", "off");
    CHECK(MPI_Win_set_info(win, info));
    MPI_Info_free(&info);
    CHECK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < np; t++) sum += read_target(win, t, 0);
    CHECK(MPI_Win_unlock_all(win));
    result("sum", sum);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_free(&win));
    free(mem);
}

/* Accumulate family: sums into every target, reads back. */
static void accumulate(void) {
    long long *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(64 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 64; i++) mem[i] = i;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_lock_all(0, win));
    long long fetched = 0;
    for (int it = 0; it < iters; it++) {
        for (int t = 0; t < np; t++) {
            long long before[8], add[8], res[8], one = 1, got = 0;
            for (int i = 0; i < 8; i++) add[i] = me + i + it;
            CHECK(MPI_Get(before, 8, MPI_LONG_LONG, t, 8, 8, MPI_LONG_LONG, win));
            CHECK(MPI_Win_flush(t, win));
            CHECK(MPI_Accumulate(add, 8, MPI_LONG_LONG, t, 8, 8, MPI_LONG_LONG, MPI_SUM, win));
            MPI_Request r1, r2;
            CHECK(MPI_Raccumulate(add, 4, MPI_LONG_LONG, t, 20, 4, MPI_LONG_LONG, MPI_SUM, win, &r1));
            CHECK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
            CHECK(MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &got, 1, MPI_LONG_LONG, t, 40, 1, MPI_LONG_LONG, MPI_SUM,
                                     win));
            CHECK(MPI_Rget_accumulate(NULL, 0, MPI_LONG_LONG, res, 8, MPI_LONG_LONG, t, 8, 8, MPI_LONG_LONG, MPI_NO_OP,
                                      win, &r2));
            CHECK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
            CHECK(MPI_Win_flush(t, win));
            (void)before;
            (void)res;
            (void)got;
        }
    }
    CHECK(MPI_Win_flush_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    long long sum = 0;
    for (int t = 0; t < np; t++) {
        long long all[64];
        for (int rep = 0; rep < 2; rep++) {
            CHECK(MPI_Get(all, 64, MPI_LONG_LONG, t, 0, 64, MPI_LONG_LONG, win));
            CHECK(MPI_Win_flush(t, win));
            for (int i = 0; i < 64; i++) sum += all[i] * (i + 1);
        }
    }
    (void)fetched;
    CHECK(MPI_Win_unlock_all(win));
    result("sum", sum);
    CHECK(MPI_Win_free(&win));
}

/* A mutex by compare-and-swap at rank 0 protecting a counter read with MPI_Get and
 * written with MPI_Put. */
static void mutex(void) {
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++) {
        int unlocked = 0, mine = me + 1, prev = -1;
        do {
            CHECK(MPI_Compare_and_swap(&mine, &unlocked, &prev, MPI_INT, 0, 0, win));
            CHECK(MPI_Win_flush(0, win));
        } while (prev != 0);
        int c = -1, c2 = -1;
        CHECK(MPI_Get(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        CHECK(MPI_Get(&c2, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        CHECK(MPI_Win_flush(0, win));
        c += 1;
        CHECK(MPI_Put(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        CHECK(MPI_Win_flush(0, win));
        if (c2 + 1 != c) fprintf(stderr, "rank %d: duplicate get disagrees\n", me);
        CHECK(MPI_Compare_and_swap(&unlocked, &mine, &prev, MPI_INT, 0, 0, win));
        CHECK(MPI_Win_flush(0, win));
    }
    CHECK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) result("counter", mem[1]);
    CHECK(MPI_Win_free(&win));
}

/* A shared counter incremented with MPI_Fetch_and_op: every ticket is drawn once. */
static void counter(void) {
    long long *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_lock_all(0, win));
    long long tickets = 0, one = 1;
    for (int it = 0; it < iters * 4; it++) {
        long long got = -1, peek = -1;
        CHECK(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, 0, 0, MPI_SUM, win));
        CHECK(MPI_Win_flush(0, win));
        CHECK(MPI_Get(&peek, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win));
        CHECK(MPI_Win_flush(0, win));
        if (peek <= got) fprintf(stderr, "rank %d: stale counter %lld <= %lld\n", me, peek, got);
        tickets += got;
    }
    CHECK(MPI_Win_unlock_all(win));
    long long all = 0;
    MPI_Allreduce(&tickets, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        result("tickets", all);
        result("counter", *mem);
    }
    CHECK(MPI_Win_free(&win));
}

/* Every rank adds to the same 64 ints of rank 0's created window on calloc memory, 2000 x ITERS
 * times, under lock_all: the totals are exact only if each accumulate's write-back has
 * landed before the next origin reads (memory the MPI did not allocate). */
static void contended(void) {
    enum { n = 64 };
    int *mem = calloc(n, sizeof(int)), add[n];
    for (int i = 0; i < n; i++) add[i] = i + 1;
    MPI_Win win;
    CHECK(MPI_Win_create(mem, n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(MPI_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD); /* all ranks contend from the start */
    for (int it = 0; it < 2000 * iters; it++) CHECK(MPI_Accumulate(add, n, MPI_INT, 0, 0, n, MPI_INT, MPI_SUM, win));
    CHECK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) { /* the lock makes the others' accumulates visible here (separate model too) */
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        long long sum = 0;
        for (int i = 0; i < n; i++) sum += mem[i] * (long long)(i + 1);
        CHECK(MPI_Win_unlock(0, win));
        result("contended", sum);
    }
    CHECK(MPI_Win_free(&win));
    free(mem);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *p = argc > 1 ? argv[1] : "lock_flush";
    if (argc > 2) iters = atoi(argv[2]);
    if (!strcmp(p, "lock_flush"))
        lock_flush();
    else if (!strcmp(p, "lock_all"))
        lock_all();
    else if (!strcmp(p, "fence"))
        fence();
    else if (!strcmp(p, "pscw"))
        pscw();
    else if (!strcmp(p, "dynamic"))
        dynamic();
    else if (!strcmp(p, "shared"))
        shared();
    else if (!strcmp(p, "dtype"))
        dtype();
    else if (!strcmp(p, "readonly"))
        readonly(0);
    else if (!strcmp(p, "rget"))
        readonly(1);
    else if (!strcmp(p, "accumulate"))
        accumulate();
    else if (!strcmp(p, "mutex"))
        mutex();
    else if (!strcmp(p, "counter"))
        counter();
    else if (!strcmp(p, "contended"))
        contended();
    else if (!strcmp(p, "infokey"))
        infokey();
    else if (!strcmp(p, "dynamic_optin"))
        dynamic_optin();
    else {
        fprintf(stderr, "unknown pattern %s\n", p);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
