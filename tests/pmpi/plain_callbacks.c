/* Nested MPI calls inside every callback a preloaded clampi can be inside of, in a plain MPI
 * program: attribute copy/delete callbacks that duplicate and free communicators (the
 * pattern of libraries that cache an inner communicator, and of mpi4py's test_attributes),
 * an error handler, generalized-request callbacks, a user-defined reduction operation and
 * MPI_COMM_SELF's delete callback inside MPI_Finalize; and object-style broadcasts on an
 * intercommunicator where the non-root processes pass count 0 (mpi4py's
 * test_cco_obj_inter). Prints "result" lines that must be the same plainly and preloaded
 * (tests/pmpi/run_preload.sh); a hang is the failure the test exists to catch. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

#define CHECK(c)                                                                                 \
    do {                                                                                         \
        if (!(c)) {                                                                              \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #c); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
        }                                                                                        \
    } while (0)

/* ---- attribute callbacks: the value is a communicator derived from MPI_COMM_WORLD ---- */
static int copies, deletes;
static int copy_dup(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    MPI_Comm *c = malloc(sizeof *c);
    CHECK(MPI_Comm_dup(*(MPI_Comm *)in, c) == MPI_SUCCESS);
    int sum = 0, one = 1;
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, *c) == MPI_SUCCESS); /* use it, inside the callback */
    CHECK(sum == nranks);
    *(void **)out = c;
    *flag = 1;
    copies++;
    return MPI_SUCCESS;
}
static int delete_free(MPI_Comm comm, int key, void *val, void *extra) {
    CHECK(MPI_Comm_free((MPI_Comm *)val) == MPI_SUCCESS);
    free(val);
    deletes++;
    return MPI_SUCCESS;
}

static void attributes(void) {
    int key;
    MPI_Comm_create_keyval(copy_dup, delete_free, &key, NULL);
    MPI_Comm obj, *inner = malloc(sizeof *inner);
    MPI_Comm_dup(MPI_COMM_WORLD, &obj);
    MPI_Comm_dup(obj, inner);
    MPI_Comm_set_attr(obj, key, inner);
    for (int i = 0; i < 4; i++) {
        MPI_Comm copy;
        MPI_Comm_dup(obj, &copy); /* copy_dup runs: MPI_Comm_dup + MPI_Allreduce inside */
        int me = rank, sum = 0;
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, copy);
        CHECK(sum == nranks * (nranks - 1) / 2);
        MPI_Comm_free(&copy); /* delete_free runs: MPI_Comm_free inside */
    }
    MPI_Comm_delete_attr(obj, key);
    MPI_Comm_free(&obj);
    MPI_Comm_free_keyval(&key);
    printf("result attributes rank=%d copies=%d deletes=%d\n", rank, copies, deletes);
}

/* ---- an error handler that communicates on a communicator of its own ---- */
static int handled;
static void on_error(MPI_Comm *comm, int *code, ...) {
    int cls;
    MPI_Error_class(*code, &cls);
    MPI_Comm self;
    CHECK(MPI_Comm_dup(MPI_COMM_SELF, &self) == MPI_SUCCESS);
    int out = cls, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, 0, 5, &in, 1, MPI_INT, 0, 5, self, MPI_STATUS_IGNORE);
    MPI_Comm_free(&self);
    handled = in;
}

static void error_handler(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(c, eh);
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, nranks + 5, 0, c); /* invalid rank */
    int cls;
    MPI_Error_class(rc, &cls);
    /* what the call returns after a user-defined handler differs between MPIs (MPICH 5:
     * MPI_SUCCESS): only the handler's view is a result */
    printf("result errhandler rank=%d class_seen=%d\n", rank, handled == MPI_ERR_RANK);
    printf("errhandler rank=%d returned class %d\n", rank, cls);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&c);
}

/* ---- generalized request callbacks ---- */
static int query_calls, free_calls;
static int greq_query(void *extra, MPI_Status *st) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Status_set_elements(st, MPI_INT, r + 1);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = r;
    st->MPI_TAG = 7;
    st->MPI_ERROR = MPI_SUCCESS;
    query_calls++;
    return MPI_SUCCESS;
}
static int greq_free(void *extra) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_SELF, &c);
    MPI_Comm_free(&c);
    free_calls++;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete) { return MPI_SUCCESS; }

static void generalized_request(void) {
    MPI_Request r;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &r);
    MPI_Grequest_complete(r);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_INT, &n);
    printf("result greq rank=%d count=%d tag=%d query=%d free=%d\n", rank, n, st.MPI_TAG, query_calls > 0, free_calls);
}

/* ---- a user-defined reduction that asks MPI about its datatype ---- */
static void sum_op(void *in, void *inout, int *len, MPI_Datatype *type) {
    int size = 0;
    MPI_Type_size(*type, &size);
    CHECK(size == (int)sizeof(int));
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void user_op(void) {
    MPI_Op op;
    MPI_Op_create(sum_op, 1, &op);
    int v[3] = {rank, 1, 2 * rank}, s[3];
    MPI_Allreduce(v, s, 3, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    printf("result user_op rank=%d sums=%d,%d,%d\n", rank, s[0], s[1], s[2]);
}

/* ---- point-to-point on MPI_COMM_WORLD (what CLAMPI_MATCH carries) ---- */
static void ring(void) {
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks, got[4] = {0};
    MPI_Request rq[2];
    for (int i = 0; i < 4; i++) {
        int out = rank * 10 + i;
        MPI_Irecv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    printf("result ring rank=%d got=%d,%d,%d,%d\n", rank, got[0], got[1], got[2], got[3]);
    (void)left;
}

/* ---- object-style broadcast on an intercommunicator: a size, then the bytes; the
 * processes that are neither root nor receivers pass count 0 ---- */
static void obj_bcast(const char *msg, int root, MPI_Comm c, char *out) {
    int count = msg ? (int)strlen(msg) : 0;
    MPI_Bcast(&count, 1, MPI_INT, root, c);
    CHECK(count >= 0 && count <= 64);
    char buf[65] = "";
    if (msg) memcpy(buf, msg, (size_t)count);
    MPI_Bcast(buf, root == MPI_PROC_NULL ? 0 : count, MPI_BYTE, root, c);
    if (out) {
        memcpy(out, buf, (size_t)count);
        out[count] = 0;
    }
}

static void intercomm_bcast(void) {
    if (nranks < 2) return;
    int color = rank < nranks / 2 ? 0 : 1, remote_leader = color ? 0 : nranks / 2;
    MPI_Comm intra, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, 0, &intra);
    MPI_Intercomm_create(intra, 0, MPI_COMM_WORLD, remote_leader, 0, &inter);
    int me, size, rsize, received = 0;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    const char *msgs[] = {"N.", "abc", "hello world", "xyzzy!"};
    for (int it = 0; it < 10; it++)
        for (int m = 0; m < 4; m++)
            for (int c = 0; c < 2; c++) {
                if (color == c) {
                    for (int root = 0; root < size; root++)
                        obj_bcast(root == me ? msgs[m] : NULL, root == me ? MPI_ROOT : MPI_PROC_NULL, inter, NULL);
                } else {
                    for (int root = 0; root < rsize; root++) {
                        char got[65];
                        obj_bcast(NULL, root, inter, got);
                        CHECK(strcmp(got, msgs[m]) == 0);
                        received++;
                    }
                }
            }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&intra);
    printf("result intercomm_bcast rank=%d received=%d\n", rank, received);
}

/* ---- MPI_COMM_SELF's delete callback, run inside MPI_Finalize, frees a communicator ---- */
static int finalize_delete(MPI_Comm comm, int key, void *val, void *extra) {
    MPI_Comm *c = val;
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, *c);
    MPI_Comm_free(c);
    free(c);
    printf("result finalize_callback rank=%d sum=%d\n", rank, sum);
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    attributes();
    error_handler();
    generalized_request();
    user_op();
    ring();
    intercomm_bcast();
    int key;
    MPI_Comm *kept = malloc(sizeof *kept);
    MPI_Comm_dup(MPI_COMM_WORLD, kept);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, kept);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
