/* Communicators made from a clampi communicator on the MPI carrier, whose private
 * duplicate (the wire) is made beside MPI's own:
 *  1. the program's attribute callbacks run once per MPI_Comm_dup and once per
 *     MPI_Comm_free, never on clampi's wire (made from a communicator without them);
 *  2. MPI_Comm_split and MPI_Comm_dup of the split communicator carry messages right;
 *  3. enabling is all or none: an MPI_Comm_dup_with_info whose clampi_match value is bad on
 *     rank 0 only leaves the duplicate on MPI everywhere (a ring exchange on it would hang
 *     otherwise), and so does the duplicate of that one;
 *  4. an info with the clampi_match key on rank 0 only (MPI_Comm_dup_with_info,
 *     MPI_Comm_split_type), and an MPI_Comm_dup_with_info without it (which copies the
 *     attributes): every process meets the same collectives, the callbacks run as plainly.
 *  5. a process that cannot enable a duplicate when the others can (clampi's table of
 *     256 MPI-carrier communicators full on rank 0 first: it holds 20 with rank 2 besides
 *     its 300 duplicates with rank 1): the duplicate stays on MPI on both, each carries a
 *     ring exchange.
 *  6. MPI_Comm_create with a process outside the group and MPI_Comm_create_group called
 *     by its group only (the wire is made the same way from the parent's wire).
 * The preloaded run's stats lines show the derived communicators enabled (the test's
 * regexes: a duplicate of a split communicator, a communicator made by MPI_Comm_create_group
 * and a duplicate of one made by MPI_Comm_create carried their messages on clampi's path).
 * Run plainly and preloaded (CLAMPI_MATCH, CLAMPI_MATCH_CARRIER=mpi): the "result" lines
 * (each rank's callback counts, then ok) must be the same. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int copies, deletes, bad;

static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag) {
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int kv, void *value, void *extra) {
    deletes++;
    return MPI_SUCCESS;
}

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) {                                                         \
            fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #c); \
            bad = 1;                                                        \
        }                                                                   \
    } while (0)

/* Each rank sends its rank + base to the next and receives the previous one's. */
static void ring(MPI_Comm comm, int base) {
    int rank, size, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, mine = rank + base;
    MPI_Sendrecv(&mine, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, comm, MPI_STATUS_IGNORE);
    CHECK(got == prev + base);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, kv;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &kv);

    /* 1 */
    MPI_Comm d[4];
    for (int i = 0; i < 4; i++) MPI_Comm_dup(MPI_COMM_WORLD, &d[i]);
    CHECK(copies == 4);
    for (int i = 0; i < 4; i++) ring(d[i], 10 * i);
    for (int i = 0; i < 4; i++) MPI_Comm_free(&d[i]);
    CHECK(deletes == 4);

    /* 2: split in two halves (by parity), its duplicate */
    MPI_Comm half, half_dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_dup(half, &half_dup);
    ring(half, 100);
    ring(half_dup, 200);
    MPI_Comm_free(&half_dup);
    MPI_Comm_free(&half);
    CHECK(copies == 4 && deletes == 4);

    /* 3 */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_match", rank == 0 ? "tree" : "lla");
    MPI_Info_set(info, "clampi_match_carrier", "mpi");
    MPI_Comm e, e_dup;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &e);
    ring(e, 300);
    MPI_Comm_dup(e, &e_dup);
    ring(e_dup, 400);
    MPI_Comm_free(&e_dup);
    MPI_Comm_free(&e);
    MPI_Info_free(&info);
    CHECK(copies == 6 && deletes == 6);

    /* 4 */
    MPI_Info keyed, empty;
    MPI_Info_create(&keyed);
    MPI_Info_create(&empty);
    if (rank == 0) MPI_Info_set(keyed, "clampi_match", "lla");
    MPI_Comm f, g, h;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, keyed, &f);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, empty, &g);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, keyed, &h);
    ring(f, 500);
    ring(g, 600);
    ring(h, 700);
    MPI_Comm_free(&h);
    MPI_Comm_free(&g);
    MPI_Comm_free(&f);
    MPI_Info_free(&empty);
    MPI_Info_free(&keyed);
    CHECK(copies == 8 && deletes == 8);

    /* 5 (3 ranks or more) */
    if (size >= 3) {
        enum { HELD = 20, DUPS = 300 };
        MPI_Comm with2, with1, held[HELD], dups[DUPS];
        MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 2 ? 0 : MPI_UNDEFINED, rank, &with2);
        MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 1 ? 0 : MPI_UNDEFINED, rank, &with1);
        if (with2 != MPI_COMM_NULL)
            for (int i = 0; i < HELD; i++) MPI_Comm_dup(with2, &held[i]);
        if (with1 != MPI_COMM_NULL) {
            for (int i = 0; i < DUPS; i++) {
                MPI_Comm_dup(with1, &dups[i]);
                ring(dups[i], 1000 + i);
            }
            for (int i = 0; i < DUPS; i++) MPI_Comm_free(&dups[i]);
            MPI_Comm_free(&with1);
        }
        if (with2 != MPI_COMM_NULL) {
            for (int i = 0; i < HELD; i++) MPI_Comm_free(&held[i]);
            MPI_Comm_free(&with2);
        }
    }

    /* 6 (3 ranks or more): MPI_Comm_create of a group without rank 1 (its part in the wire
     * is a call outside the group) and MPI_Comm_create_group called by ranks 1 and 2 only,
     * the group in reverse order; each new communicator and its duplicate carry a ring */
    if (size >= 3) {
        MPI_Group world, g02, g21;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int r02[2] = {0, 2}, r21[2] = {2, 1};
        MPI_Group_incl(world, 2, r02, &g02);
        MPI_Group_incl(world, 2, r21, &g21);
        MPI_Comm c02, c21 = MPI_COMM_NULL, d;
        MPI_Comm_create(MPI_COMM_WORLD, g02, &c02);
        CHECK((c02 == MPI_COMM_NULL) == (rank == 1));
        if (rank == 1 || rank == 2) MPI_Comm_create_group(MPI_COMM_WORLD, g21, 9, &c21);
        if (c02 != MPI_COMM_NULL) {
            ring(c02, 2000);
            MPI_Comm_dup(c02, &d);
            MPI_Comm_set_name(d, "c02dup"); /* named in the stats lines */
            ring(d, 2100);
            MPI_Comm_free(&d);
            MPI_Comm_free(&c02);
        }
        if (c21 != MPI_COMM_NULL) {
            int r;
            MPI_Comm_rank(c21, &r);
            CHECK(r == (rank == 2 ? 0 : 1));
            ring(c21, 2200);
            MPI_Comm_set_name(c21, "c21");
            MPI_Comm_dup(c21, &d);
            ring(d, 2300);
            MPI_Comm_free(&d);
            MPI_Comm_free(&c21);
        }
        MPI_Group_free(&g21);
        MPI_Group_free(&g02);
        MPI_Group_free(&world);
    }

    MPI_Comm_delete_attr(MPI_COMM_WORLD, kv);
    MPI_Comm_free_keyval(&kv);
    printf("result comm_derived_wire rank %d: %d copies, %d deletes\n", rank, copies, deletes);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf(bad ? "result comm_derived_wire FAIL\n" : "result comm_derived_wire: ok\n");
    MPI_Finalize();
    return bad;
}
