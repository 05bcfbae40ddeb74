/* The hybrid-MPI locality paper, Table 1: three threads, two pages A and B.
 *   page A: first touched by thread 1 (T0 here), accesses 20 / 5 / 10
 *   page B: first touched by thread 2 (T1),      accesses  0 / 1 / 10
 * Threads run one after the other (create + join) so the order is fixed.
 * Every access is one volatile byte load or store (built with -O0). */
#include <pthread.h>
#include <stdlib.h>

#define PAGE 4096
static volatile char *table;

static void stores(volatile char *p, int n) {
    for (int i = 0; i < n; i++) p[i] = (char)i; /* @TOUCH */
}

static void *thread2(void *arg) {
    stores(table, 5);
    stores(table + PAGE, 1);
    return NULL;
}

static void *thread3(void *arg) {
    stores(table, 10);
    stores(table + PAGE, 10);
    return NULL;
}

int main(void) {
    table = aligned_alloc(PAGE, 2 * PAGE); /* @ALLOC */
    stores(table, 20);
    pthread_t t;
    pthread_create(&t, NULL, thread2, NULL);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, thread3, NULL);
    pthread_join(t, NULL);
    free((void *)table);
    return 0;
}
