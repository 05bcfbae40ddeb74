/* CMPIX_Win_op_intrinsic: bad op lists and counts are refused; an MPI-backend window says
 * 0; UCX says 0 for what it has no atomics for (prod, max, min, floats, long vectors); for
 * add/and/or/xor/swap/cas on 32/64-bit integers it answers from the transports, and the
 * answer is checked, not trusted: if it says 1, the target proves it is one-sided by
 * spinning OUTSIDE MPI and clampi until the origin's intrinsic atomics have changed its
 * memory (they could not if UCX needed the target's CPU). argv[1] = the expected answer
 * for "sum,cas" on a UCX window allocated by MPI memory ("0"/"1"/"any"). */
#include <string.h>
#include <time.h>

#include "mpi_util.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *expect = argc > 1 ? argv[1] : "any";
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int flag = -1;

    /* MPI window: MPI hides how it does accumulates */
    CMPI_Win m;
    long *mb;
    CHECK_EQ_INT(CMPI_Win_allocate(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mb, &m), MPI_SUCCESS);
    MPI_Win_set_errhandler(m.win, MPI_ERRORS_RETURN);
    CHECK_EQ_INT(CMPIX_Win_op_intrinsic("sum", 1, MPI_LONG, m, &flag), MPI_SUCCESS);
    CHECK_EQ_INT(flag, 0);
    flag = 7;
    CHECK_CLASS(CMPIX_Win_op_intrinsic("sum,fma", 1, MPI_LONG, m, &flag), MPI_ERR_ARG);
    CHECK_CLASS(CMPIX_Win_op_intrinsic("sum,,cas", 1, MPI_LONG, m, &flag), MPI_ERR_ARG);
    CHECK_CLASS(CMPIX_Win_op_intrinsic("", 1, MPI_LONG, m, &flag), MPI_ERR_ARG);
    CHECK_CLASS(CMPIX_Win_op_intrinsic(NULL, 1, MPI_LONG, m, &flag), MPI_ERR_ARG);
    CHECK_CLASS(CMPIX_Win_op_intrinsic("sum", -1, MPI_LONG, m, &flag), MPI_ERR_COUNT);
    CHECK_EQ_INT(flag, 7); /* untouched on error */
    CHECK_EQ_INT(CMPI_Win_free(&m), MPI_SUCCESS);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    MPI_Info_set(info, CLAMPI_ACC_INTRINSIC, "true");
    CMPI_Win w;
    long *base;
    CHECK_EQ_INT(CMPI_Win_allocate(64 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base, &w), MPI_SUCCESS);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    memset(base, 0, 64 * sizeof(long));
    static const char *never[] = {"prod", "max", "min", "sum,prod", "band,min"};
    for (unsigned i = 0; i < sizeof never / sizeof *never; i++) {
        CHECK_EQ_INT(CMPIX_Win_op_intrinsic(never[i], 1, MPI_LONG, w, &flag), MPI_SUCCESS);
        CHECK_EQ_INT(flag, 0);
    }
    CHECK_EQ_INT(CMPIX_Win_op_intrinsic("sum", 1, MPI_DOUBLE, w, &flag), MPI_SUCCESS);
    CHECK_EQ_INT(flag, 0);
    CHECK_EQ_INT(CMPIX_Win_op_intrinsic("sum", 1 << 20, MPI_INT, w, &flag), MPI_SUCCESS);
    CHECK_EQ_INT(flag, 0);
    int f32 = -1, f64 = -1;
    CHECK_EQ_INT(CMPIX_Win_op_intrinsic("sum,band,bor,bxor,replace,no_op,cas", 1, MPI_INT, w, &f32), MPI_SUCCESS);
    CHECK_EQ_INT(CMPIX_Win_op_intrinsic("sum, cas", 1, MPI_LONG, w, &f64), MPI_SUCCESS);
    CHECK_EQ_INT(f32, f64); /* same transports, same answer */
    int all = 0;
    MPI_Allreduce(&f64, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!strcmp(expect, "0")) CHECK_EQ_INT(f64, 0);
    if (!strcmp(expect, "1")) CHECK_EQ_INT(f64, 1);

    /* Checked, not trusted: with 1 the target waits outside MPI for the origins' atomics. */
    CHECK_EQ_INT(CMPI_Win_lock_all(MPI_MODE_NOCHECK, w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (all == 1 && n > 1) {
        if (rank == 0) {
            const double deadline = now() + 60;
            while (__atomic_load_n(&base[0], __ATOMIC_ACQUIRE) < n - 1 && now() < deadline) { /* no MPI, no clampi */
            }
            CHECK_EQ_INT(base[0], n - 1); /* else the "intrinsic" atomics needed this CPU */
        } else {
            long one = 1, old = -1;
            CHECK_EQ_INT(CMPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, w), MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_flush(0, w), MPI_SUCCESS);
            CHECK(old >= 0 && old < n - 1);
        }
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Finalize();
    if (rank == 0) printf("test_op_intrinsic: ok (flag %d, expected %s)\n", f64, expect);
    return 0;
}
