/* Dies from SIGSEGV after touching a tracked allocation: the tracer must keep
 * its partial output and mark it incomplete. */
#include <stdlib.h>

int main(void) {
    volatile char *data = malloc(2 * 4096);
    data[0] = 1;
    volatile char *null = NULL;
    null[0] = 1;
    return 0;
}
