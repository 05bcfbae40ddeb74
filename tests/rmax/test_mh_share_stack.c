/* Moving pages of the calling thread's own stack (rmax/mh_share.h), without MPI: a 4 KiB
 * array whose first page also holds the frames of the calls that move it is shared and put
 * back 5,000 times, with its contents checked each time. A write of the mover's own frames
 * between the copy and the mapping would be lost and, for a return address, crash: the move
 * runs on a stack of its own (swapcontext) for that reason. Also: a handle made on a worker
 * thread's stack and released by another thread leaves the pages on the file (no lost write
 * of the worker's, which keeps running). */
#include <alloca.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmax/mh_share.h"

static void *shares;
__attribute__((noinline)) static int one(int i) {
    unsigned char arr[4096];
    for (int k = 0; k < 4096; k++) arr[k] = (unsigned char)(k + i);
    clampi_mh_share_ref r;
    if (clampi_mh_share(&shares, arr, sizeof arr, (uint64_t)i + 1, &r) != 0) return -1;
    int bad = 0;
    for (int k = 0; k < 4096; k++) bad += arr[k] != (unsigned char)(k + i);
    clampi_mh_unshare(&shares, (uint64_t)i + 1);
    for (int k = 0; k < 4096; k++) bad += arr[k] != (unsigned char)(k + i);
    return bad;
}

/* The array starts late in a page, so the frames below it share that page. */
__attribute__((noinline)) static void same_thread(int iters) {
    volatile char here;
    size_t shift = (((uintptr_t)&here & 4095) + 4096 - 3500 - 4096 - 200) & 4095;
    volatile char *pad = alloca(shift + 16);
    pad[0] = 0;
    int moved = 0;
    for (int i = 0; i < iters; i++) {
        int bad = one(i);
        moved += bad >= 0;
        CHECK(bad <= 0);
    }
    CHECK(moved == iters);
}

static volatile int phase;

__attribute__((noinline)) static long churn(int d, long x) {
    volatile long loc[8];
    for (int i = 0; i < 8; i++) loc[i] = x + i;
    return d ? churn(d - 1, loc[3] + 1) : loc[7];
}

static void *worker(void *gen) {
    unsigned char arr[256];
    memset(arr, 5, sizeof arr);
    clampi_mh_share_ref r;
    int shared = clampi_mh_share(&shares, arr, sizeof arr, (uint64_t)(uintptr_t)gen, &r) == 0;
    long bad = 0;
    __atomic_store_n(&phase, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&phase, __ATOMIC_SEQ_CST) != 2)
        if (churn(10, 7) != 7 + 10 * 4 + 7) bad++;
    for (int i = 0; i < 256; i++) bad += arr[i] != 5;
    return (void *)(intptr_t)(shared ? bad : -1);
}

static void other_thread(int iters) {
    int lost = 0, moved = 0;
    for (int it = 1; it <= iters; it++) {
        pthread_t t;
        phase = 0;
        pthread_create(&t, NULL, worker, (void *)(uintptr_t)(1000000 + it));
        while (__atomic_load_n(&phase, __ATOMIC_SEQ_CST) != 1)
            ;
        clampi_mh_unshare(&shares, 1000000 + (uint64_t)it);
        __atomic_store_n(&phase, 2, __ATOMIC_SEQ_CST);
        void *bad;
        pthread_join(t, &bad);
        moved += (intptr_t)bad >= 0;
        lost += (intptr_t)bad > 0;
    }
    CHECK(lost == 0);
    CHECK(moved > 0);
}

int main(void) {
    same_thread(5000);
    other_thread(300);
    printf("test_mh_share_stack: ok\n");
    return 0;
}
