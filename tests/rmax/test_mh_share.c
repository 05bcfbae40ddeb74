/* Memory handles to the program's own memory (rmax/mh_share.h): rank 0 makes handles to a
 * 1 MiB malloc block (glibc maps it on its own: every page moves), a 64 KiB array on its
 * stack (every page moves: its edge pages hold only rank 0's frames) and a 20 KiB block
 * inside malloc's heap (every page moves under a write guard, its edge pages with the
 * neighbouring blocks; without userfaultfd only the pages wholly inside, the edge bytes
 * going through UCX).
 * Every other rank checks which bytes its handle window reaches by load and store, puts
 * and gets across the edges and the middle, sees the owner's stores and the owner sees its
 * puts. The owner's pages are on a memory file while the handle lives (/proc/self/maps)
 * and private again after the release, their contents kept; a released handle lets
 * nothing in; the malloc block still grows with realloc afterwards. A peer maps the file
 * once for all its windows of the handle, and drops the mapping once the handle is released
 * and its last window freed.
 * Argument "off": with CLAMPI_MH_SHARE=false nothing moves and nothing is direct. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_util.h"
#include "rmax/mh_guard.h"
#include "ucx_probe.h"

#define PAGE 4096

/* Bytes of [p, p+n) that /proc/self/maps shows on clampi's memory files. */
static size_t bytes_on_files(const void *p, size_t n) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    size_t on = 0;
    const uintptr_t lo = (uintptr_t)p, hi = lo + n;
    while (fgets(line, sizeof line, f)) {
        unsigned long s, e;
        if (sscanf(line, "%lx-%lx", &s, &e) != 2 || !strstr(line, "/memfd:clampi-mh-")) continue;
        uintptr_t a = s > lo ? s : lo, b = e < hi ? e : hi;
        if (a < b) on += b - a;
    }
    fclose(f);
    return on;
}

/* clampi memory files mapped in this process (/proc/self/maps lines). */
static int files_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, "/memfd:clampi-mh-") != NULL;
    fclose(f);
    return n;
}

static unsigned char pattern(size_t i, int kind) { return (unsigned char)(i * 7 + kind * 31 + 1); }

/* One region: the owner (rank 0) exposes [mem, mem+size); expect_lo/hi are the bytes a peer
 * must reach directly (by the rules in mh_share.h), 0/0 when sharing is off. */
static void exercise(CMPI_Win dyn, unsigned char *mem, size_t size, int kind, uint64_t expect_lo, uint64_t expect_hi,
                     int on) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    unsigned char h[CMPIX_MAX_MEMHANDLE_SIZE];
    int hlen = 0;
    if (rank == 0) {
        for (size_t i = 0; i < size; i++) mem[i] = pattern(i, kind);
        CHECK_EQ_INT(CMPI_Win_attach(dyn, mem, (MPI_Aint)size), MPI_SUCCESS);
        CHECK_EQ_INT(CMPIX_Memhandle_create(mem, (MPI_Aint)size, dyn, h, &hlen), MPI_SUCCESS);
        /* moved (or not), contents unchanged */
        CHECK_EQ_INT((int)bytes_on_files(mem + expect_lo, expect_hi - expect_lo), (int)(expect_hi - expect_lo));
        if (!on) CHECK_EQ_INT((int)bytes_on_files(mem, size), 0);
        for (size_t i = 0; i < size; i++) CHECK_EQ_INT(mem[i], pattern(i, kind));
    }
    MPI_Bcast(&hlen, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h, hlen, MPI_BYTE, 0, MPI_COMM_WORLD);
    CMPI_Win mw;
    CHECK_EQ_INT(CMPIX_Win_from_memhandle(h, hlen, 0, 1, MPI_INFO_NULL, dyn, &mw), MPI_SUCCESS);
    uint64_t lo, hi, ops;
    CHECK_EQ_INT(clampi_ucx_test_mh_direct_bytes(mw, &lo, &hi, &ops), MPI_SUCCESS);
    CHECK_EQ_INT((int)lo, (int)expect_lo);
    CHECK_EQ_INT((int)hi, (int)expect_hi);
    /* A peer maps the owner's file once: a second window of the handle uses the same mapping. */
    if (rank > 0) {
        CHECK_EQ_INT(files_mapped(), on);
        CMPI_Win again;
        CHECK_EQ_INT(CMPIX_Win_from_memhandle(h, hlen, 0, 1, MPI_INFO_NULL, dyn, &again), MPI_SUCCESS);
        CHECK_EQ_INT(files_mapped(), on);
        CHECK_EQ_INT(CMPI_Win_free(&again), MPI_SUCCESS);
    }

    /* Each peer r writes 64 bytes at both edges and in the middle (slot r of each), then
     * reads back the owner's bytes just past them: puts and gets, direct and through UCX. */
    const size_t at[3] = {0, size / 2, size - 64 * (size_t)n};
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
    unsigned char out[3][64], in[64]; /* an origin buffer per put: untouched until the flush */
    if (rank > 0) {
        for (int k = 0; k < 3; k++) {
            memset(out[k], rank * 16 + k, sizeof out[k]);
            CHECK_EQ_INT(CMPI_Put(out[k], 64, MPI_BYTE, 0, (MPI_Aint)(at[k] + 64 * (size_t)rank), 64, MPI_BYTE, mw),
                         MPI_SUCCESS);
        }
        CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
        for (int k = 0; k < 3; k++) {
            CHECK_EQ_INT(CMPI_Get(in, 64, MPI_BYTE, 0, (MPI_Aint)(at[k] + 64 * (size_t)rank), 64, MPI_BYTE, mw),
                         MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
            CHECK_EQ_INT(memcmp(in, out[k], 64), 0);
        }
    }
    CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    /* Exactly the accesses wholly inside the moved pages were loads and stores. */
    uint64_t inside = 0;
    for (int k = 0; k < 3; k++) {
        const uint64_t a = at[k] + 64 * (uint64_t)rank;
        inside += rank > 0 && a >= expect_lo && a + 64 <= expect_hi ? 2 : 0; /* its put and its get */
    }
    CHECK_EQ_INT(clampi_ucx_test_mh_direct_bytes(mw, &lo, &hi, &ops), MPI_SUCCESS);
    CHECK_EQ_INT((int)ops, (int)inside);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 1; r < n; r++)
            for (int k = 0; k < 3; k++)
                for (size_t i = 0; i < 64; i++) CHECK_EQ_INT(mem[at[k] + 64 * (size_t)r + i], r * 16 + k);
        mem[size / 2] = 0xab; /* the owner's store, seen by the peers' gets */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Get(in, 1, MPI_BYTE, 0, (MPI_Aint)(size / 2), 1, MPI_BYTE, mw), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
        CHECK_EQ_INT(in[0], 0xab);
        CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Released: the pages are private again with every byte kept; nothing gets in. */
    if (rank == 0) {
        CHECK_EQ_INT(CMPIX_Memhandle_release(h, dyn), MPI_SUCCESS);
        CHECK_EQ_INT((int)bytes_on_files(mem, size), 0);
        for (int r = 1; r < n; r++)
            for (int k = 0; k < 3; k++) CHECK_EQ_INT(mem[at[k] + 64 * (size_t)r + 63], r * 16 + k);
        CHECK_EQ_INT(mem[size / 2], 0xab);
        CHECK_EQ_INT(mem[size / 2 + 1], pattern(size / 2 + 1, kind));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_set_errhandler(mw.win, MPI_ERRORS_RETURN);
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
    if (rank > 0)
        CHECK_CLASS(CMPI_Put(out[0], 8, MPI_BYTE, 0, (MPI_Aint)(size / 2), 8, MPI_BYTE, mw), MPI_ERR_RMA_RANGE);
    CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&mw), MPI_SUCCESS);
    if (rank > 0) CHECK_EQ_INT(files_mapped(), 0); /* a released handle's mapping is not kept */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_EQ_INT(mem[size / 2], 0xab);
        CHECK_EQ_INT(CMPI_Win_detach(dyn, mem), MPI_SUCCESS);
    }
}

static void on_stack(CMPI_Win dyn, int on) {
    unsigned char a[64 << 10];
    exercise(dyn, a, sizeof a, 2, 0, on ? sizeof a : 0, on);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int on = !(argc > 1 && !strcmp(argv[1], "off"));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    CMPI_Win dyn;
    CHECK_EQ_INT(CMPI_Win_create_dynamic(info, MPI_COMM_WORLD, &dyn), MPI_SUCCESS);
    MPI_Win_set_errhandler(dyn.win, MPI_ERRORS_RETURN);

    /* Edge pages shared with other blocks move under a write guard, where there is one. */
    int guarded = clampi_mh_guard_available(0) && clampi_mh_guard_available(1);
    MPI_Bcast(&guarded, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const size_t big = 1 << 20;
    unsigned char *m = malloc(big);
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's malloc, not glibc's: its edge pages hold other blocks */
    if (guarded) {
        exercise(dyn, m, big, 1, 0, on ? big : 0, on);
        goto grown;
    }
    const uintptr_t mb = (uintptr_t)m;
    uint64_t mlh[2] = {((mb + PAGE - 1) & ~(uintptr_t)(PAGE - 1)) - mb, ((mb + big) & ~(uintptr_t)(PAGE - 1)) - mb};
    MPI_Bcast(mlh, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    exercise(dyn, m, big, 1, on ? mlh[0] : 0, on ? mlh[1] : 0, on);
#else
    exercise(dyn, m, big, 1, 0, on ? big : 0, on);
#endif
#if defined(__SANITIZE_ADDRESS__)
grown:
#endif
    m = realloc(m, 4 * big); /* grows (mremap) as ordinary memory */
    CHECK(m != NULL);
    memset(m, 1, 4 * big);
    free(m);

    on_stack(dyn, on);

    /* Inside malloc's heap: a block in the middle of it, not page-aligned (where the heap's
     * layout puts one on a page boundary, a small block before the next try shifts it). */
    void *before = malloc(100), *skipped[16] = {0};
    unsigned char *small = malloc(20 << 10);
    for (int t = 0; t < 16 && (uintptr_t)small % PAGE == 0; t += 2) {
        skipped[t] = small, skipped[t + 1] = malloc(48);
        small = malloc(20 << 10);
    }
    CHECK((uintptr_t)small % PAGE != 0);
    void *after = malloc(100);
    uintptr_t s = (uintptr_t)small;
    /* the owner's whole pages inside it (rank 0's addresses) */
    uint64_t lohi[2] = {((s + PAGE - 1) & ~(uintptr_t)(PAGE - 1)) - s, ((s + (20 << 10)) & ~(uintptr_t)(PAGE - 1)) - s};
    MPI_Bcast(lohi, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    uint64_t lo = lohi[0], hi = lohi[1];
    CHECK(lo > 0 && hi < (20 << 10));
    if (guarded) lo = 0, hi = 20 << 10; /* the edge pages move too */
    exercise(dyn, small, 20 << 10, 3, on ? lo : 0, on ? hi : 0, on);
    free(before), free(small), free(after);
    for (int t = 0; t < 16; t++) free(skipped[t]);

    CHECK_EQ_INT(CMPI_Win_free(&dyn), MPI_SUCCESS);
    MPI_Info_free(&info);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0) printf("test_mh_share: ok (%s)\n", on ? "pages moved" : "sharing off");
    return 0;
}
