/* Touches 4 pages of `buf`, then dies of SIGSEGV: the sampler must leave partial output
 * ("complete": false, "signal": "SIGSEGV") and the process must still die of the signal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *buf = malloc(4 * 4096);
    memset(buf, 1, 4 * 4096);
    volatile int *null = (volatile int *)(uintptr_t)(buf[0] == 1 ? 0 : 8);
    *null = 42; /* SIGSEGV */
    return buf[1];
}
