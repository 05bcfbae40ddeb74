/* Plain MPI (no clampi calls) for the preload's Quo Vadis RMA keys: random sequences of puts,
 * gets, accumulates, atomics and request-based operations under every synchronization
 * kind, on a window made by MPI_Win_create, MPI_Win_allocate or MPI_Win_create_dynamic
 * with the info keys given on the command line. Prints deterministic "result" lines
 * (run_preload.sh: identical plainly and preloaded) and one "keys" line with what
 * MPI_Win_get_info reports (the test's regex checks it under the preload).
 * Usage: plain_rma_keys KIND KEYS ROUNDS [SEED]
 *   KIND: create | allocate | dynamic
 *   KEYS: none, or key=value[,key=value...] set on the creation info
 * Layout of every rank's window (int64): np blocks of S slots (block r is written only by
 * origin r: results are deterministic) and A accumulation slots (MPI_SUM from everyone). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 24
#define A 8
#define MAXK 4
#define LOG 4096

static int me, np;
static MPI_Aint nelem;
static MPI_Aint *bases; /* dynamic: every rank's attached base; else unused */
static int dynamic;

#include "plain_check.h"

static uint64_t rng;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int pick(int n) { return (int)(next() % (uint64_t)n); }

static MPI_Aint disp(int t, MPI_Aint i) { return dynamic ? bases[t] + i * (MPI_Aint)sizeof(int64_t) : i; }

/* Per target: what each own slot has seen since its last completion at the target:
 * 0 nothing, 1 put, 2 get, 3 accumulate-type. Conflicting kinds need a flush between. */
static unsigned char state[64][S];
static int64_t logbuf[LOG];
static int nlog;
static uint64_t hash = 1469598103934665603ull;
static void fold(int64_t v) {
    hash ^= (uint64_t)v;
    hash *= 1099511628211ull;
}
/* Origin buffers (and compare values) live until the operations complete (MPI may read
 * them until then): a fresh piece of this pool per operation, reused after completion. */
static int64_t srcpool[LOG];
static int nsrc;
static void fold_log(void) {
    for (int i = 0; i < nlog; i++) fold(logbuf[i]);
    nlog = 0;
    nsrc = 0;
}
static void clear_state(int t) { memset(state[t], 0, S); }
static void clear_all(void) { memset(state, 0, sizeof state); }

/* CLAMPI_TEST_OMPI_WORKAROUNDS (Open MPI 4.1 runs, with osc/pt2pt: its osc/rdma crashes in
 * compare-and-swap to self): pt2pt does not keep the default accumulate ordering and can
 * hang in flush_local, so accumulate-type operations touch an element once per completion
 * and no flush_local is issued. */
static int ompi_workarounds;
/* mpi_assert_accumulate_intrinsic asked for (info or CLAMPI_ACC_INTRINSIC): the program keeps
 * the assertion (only ops with network atomics: sum, bor, bxor, replace, no_op, cas; no
 * max) and, as UCX does not order atomics to one element, touches an element once per
 * completion. */
static int intrinsic;
static int allowed(int t, int off, int k, int kind) {
    for (int i = 0; i < k; i++)
        if (state[t][off + i] &&
            (state[t][off + i] != kind || kind == 1 || (kind == 3 && (ompi_workarounds || intrinsic))))
            return 0;
    return 1;
}
static void mark(int t, int off, int k, int kind) {
    for (int i = 0; i < k; i++) state[t][off + i] = (unsigned char)kind;
}

/* One random operation to target t; passive: requests allowed, and a conflict is resolved
 * by a flush (else the operation is skipped). */
static void one_op(MPI_Win win, int t, int passive, int round, int opi) {
    if (nsrc + MAXK + 1 > LOG) return;
    int64_t *src = &srcpool[nsrc];
    nsrc += MAXK + 1;
    int k = 1 + pick(MAXK), off = pick(S - k + 1), kind = pick(passive ? 10 : 6);
    MPI_Aint own = (MPI_Aint)me * S + off;
    for (int i = 0; i < k; i++) src[i] = (int64_t)me * 1000003 + round * 1009 + opi * 17 + i;
    if (getenv("KEYS_DEBUG")) fprintf(stderr, "rank %d round %d op %d kind %d t %d\n", me, round, opi, kind, t);
    int want = kind == 1 || kind == 7 ? 2 : kind == 0 || kind == 6 ? 1 : 3;
    if (kind == 5) k = 1; /* atomics: one element */
    if (kind == 4) {      /* accumulation area: SUM only, from everyone, never read until the end */
        int ao = pick(A - k + 1);
        CHECK(MPI_Accumulate(src, k, MPI_INT64_T, t, disp(t, (MPI_Aint)np * S + ao), k, MPI_INT64_T, MPI_SUM, win));
        return;
    }
    if (!allowed(t, off, k, want)) {
        if (!passive) return;
        if (pick(2))
            CHECK(MPI_Win_flush(t, win));
        else
            CHECK(MPI_Win_flush_all(win));
        if (pick(2))
            clear_state(t);
        else
            clear_all();
    }
    if (nlog + 2 * MAXK > LOG) return;
    MPI_Request req;
    switch (kind) {
    case 0: CHECK(MPI_Put(src, k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T, win)); break;
    case 1:
        CHECK(MPI_Get(&logbuf[nlog], k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T, win));
        nlog += k;
        break;
    case 2: {
        MPI_Op ops[] = {MPI_SUM, intrinsic ? MPI_SUM : MPI_MAX, MPI_BXOR, MPI_REPLACE};
        CHECK(MPI_Accumulate(src, k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T, ops[pick(4)], win));
        break;
    }
    case 3: {
        MPI_Op ops[] = {MPI_SUM, MPI_NO_OP, MPI_BOR, MPI_REPLACE};
        CHECK(MPI_Get_accumulate(src, k, MPI_INT64_T, &logbuf[nlog], k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T,
                                 ops[pick(4)], win));
        nlog += k;
        break;
    }
    case 5:
        if (pick(2)) {
            CHECK(
                MPI_Fetch_and_op(src, &logbuf[nlog], MPI_INT64_T, t, disp(t, own), pick(2) ? MPI_SUM : MPI_NO_OP, win));
        } else {
            int64_t *cmp = &src[MAXK];
            *cmp = (int64_t)me * 1000003 + (round - pick(2)) * 1009; /* matches now and then */
            CHECK(MPI_Compare_and_swap(src, cmp, &logbuf[nlog], MPI_INT64_T, t, disp(t, own), win));
        }
        nlog += 1;
        break;
    case 6:
        CHECK(MPI_Rput(src, k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T, win, &req));
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    case 7:
        CHECK(MPI_Rget(&logbuf[nlog], k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T, win, &req));
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        nlog += k;
        break;
    case 8:
        CHECK(MPI_Raccumulate(src, k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T, MPI_SUM, win, &req));
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    default:
        CHECK(MPI_Rget_accumulate(src, k, MPI_INT64_T, &logbuf[nlog], k, MPI_INT64_T, t, disp(t, own), k, MPI_INT64_T,
                                  MPI_SUM, win, &req));
        {
            int flag = 0;
            while (!flag) CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        }
        nlog += k;
    }
    mark(t, off, k, want);
    /* extra synchronization calls that complete nothing the program relies on */
    if (passive && pick(8) == 0 && !ompi_workarounds)
        CHECK(pick(2) ? MPI_Win_flush_local(t, win) : MPI_Win_flush_local_all(win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4 || np > 64) {
        if (!me) fprintf(stderr, "usage: plain_rma_keys create|allocate|dynamic KEYS ROUNDS [SEED]\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *kindname = argv[1];
    ompi_workarounds = getenv("CLAMPI_TEST_OMPI_WORKAROUNDS") != NULL;
    intrinsic = strstr(argv[2], "mpi_assert_accumulate_intrinsic=true") ||
                (getenv("CLAMPI_ACC_INTRINSIC") && !strcmp(getenv("CLAMPI_ACC_INTRINSIC"), "true"));
    int rounds = atoi(argv[3]);
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 12345;
    MPI_Info info = MPI_INFO_NULL;
    if (strcmp(argv[2], "none")) {
        MPI_Info_create(&info);
        char *keys = strdup(argv[2]);
        for (char *kv = strtok(keys, ","); kv; kv = strtok(NULL, ",")) {
            char *eq = strchr(kv, '=');
            if (!eq) continue;
            *eq = 0;
            MPI_Info_set(info, kv, eq + 1);
        }
        free(keys);
    }
    nelem = (MPI_Aint)np * S + A;
    MPI_Aint bytes = nelem * (MPI_Aint)sizeof(int64_t);
    int64_t *mem = NULL;
    MPI_Win win;
    dynamic = !strcmp(kindname, "dynamic");
    if (!strcmp(kindname, "allocate")) {
        CHECK(MPI_Win_allocate(bytes, sizeof(int64_t), info, MPI_COMM_WORLD, &mem, &win));
    } else if (!strcmp(kindname, "create")) {
        mem = malloc((size_t)bytes);
        CHECK(MPI_Win_create(mem, bytes, sizeof(int64_t), info, MPI_COMM_WORLD, &win));
    } else {
        mem = malloc((size_t)bytes);
        CHECK(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
        CHECK(MPI_Win_attach(win, mem, bytes));
        bases = malloc(sizeof *bases * (size_t)np);
        MPI_Aint mine;
        MPI_Get_address(mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    }
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (MPI_Aint i = 0; i < nelem; i++) mem[i] = (int64_t)me * 7 + i;
    CHECK(MPI_Win_unlock(me, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* what MPI_Win_get_info says (checked by the test's regex under the preload) */
    MPI_Info used;
    CHECK(MPI_Win_get_info(win, &used));
    const char *keys[] = {"clampi_backend", "mpi_win_scope", "mpi_win_order", "mpi_assert_accumulate_intrinsic"};
    if (me == 0) {
        printf("keys");
        for (int i = 0; i < 4; i++) {
            char v[MPI_MAX_INFO_VAL + 1];
            int flag = 0;
            MPI_Info_get(used, keys[i], MPI_MAX_INFO_VAL, v, &flag);
            printf(" %s=%s", keys[i], flag ? v : "-");
        }
        printf("\n");
        fflush(stdout);
    }
    MPI_Info_free(&used);

    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    uint64_t shared_rng = seed * 2654435761u + 1;
    for (int round = 0; round < rounds; round++) {
        /* the sync kind: the same on every rank */
        shared_rng ^= shared_rng << 13, shared_rng ^= shared_rng >> 7, shared_rng ^= shared_rng << 17;
        int sync = (int)(shared_rng % 5);
        rng = seed ^ ((uint64_t)(me + 1) * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)round << 32);
        if (!rng) rng = 1;
        int nops = 4 + pick(20);
        clear_all();
        switch (sync) {
        case 0: /* lock / unlock per target */
            for (int j = 0; j < 3; j++) {
                int t = pick(np);
                CHECK(MPI_Win_lock(pick(2) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, win));
                for (int o = 0; o < nops; o++) one_op(win, t, 1, round, o);
                CHECK(MPI_Win_unlock(t, win));
                clear_all();
            }
            break;
        case 1: /* lock_all */
            CHECK(MPI_Win_lock_all(0, win));
            for (int o = 0; o < nops; o++) one_op(win, pick(np), 1, round, o);
            if (pick(2)) CHECK(MPI_Win_sync(win));
            CHECK(MPI_Win_unlock_all(win));
            break;
        case 2: /* fence */
            CHECK(MPI_Win_fence(0, win));
            for (int o = 0; o < nops; o++) one_op(win, pick(np), 0, round, o);
            CHECK(MPI_Win_fence(0, win));
            break;
        default: { /* PSCW with everyone; the target waits or tests */
            CHECK(MPI_Win_post(world, 0, win));
            CHECK(MPI_Win_start(world, 0, win));
            for (int o = 0; o < nops; o++) one_op(win, pick(np), 0, round, o);
            CHECK(MPI_Win_complete(win));
            if (sync == 3) {
                CHECK(MPI_Win_wait(win));
            } else {
                int flag = 0;
                while (!flag) CHECK(MPI_Win_test(win, &flag));
            }
        }
        }
        fold_log();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* final read of everything */
    int64_t *all = malloc(sizeof *all * (size_t)nelem);
    CHECK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < np; t++) {
        CHECK(MPI_Get(all, (int)nelem, MPI_INT64_T, t, disp(t, 0), (int)nelem, MPI_INT64_T, win));
        CHECK(MPI_Win_flush(t, win));
        uint64_t h = 1469598103934665603ull;
        for (MPI_Aint i = 0; i < nelem; i++) h = (h ^ (uint64_t)all[i]) * 1099511628211ull;
        printf("result rank=%d target=%d contents=%016llx\n", me, t, (unsigned long long)h);
    }
    CHECK(MPI_Win_unlock_all(win));
    printf("result rank=%d fetched=%016llx\n", me, (unsigned long long)hash);
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);
    if (dynamic) CHECK(MPI_Win_detach(win, mem));
    CHECK(MPI_Win_free(&win));
    if (strcmp(kindname, "allocate")) free(mem);
    free(all);
    free(bases);
    MPI_Finalize();
    return 0;
}
