/* Load imbalance from known work: thread 1 runs WORK loop iterations, thread 2
 * three times as many (thread_work must show a 1:3 ratio). */
#include <pthread.h>
#include <stdint.h>

#define WORK 200000
static void *spin(void *arg) {
    volatile uint64_t x = 0;
    long n = (long)arg;
    for (long i = 0; i < n; i++) x += (uint64_t)i;
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, spin, (void *)(long)WORK);
    pthread_create(&b, NULL, spin, (void *)(long)(3 * WORK));
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
