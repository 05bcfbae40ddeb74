/* Known access counts, allocation kinds and structure names for the exact tracer.
 * Built with -O0 -g; every counted access goes through a volatile pointer.
 * The @MARK comments name the lines the test checks (check_locality.py). */
#include <clampi/locality.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
static double grid[3 * PAGE / sizeof(double)] __attribute__((aligned(PAGE)));

int main(void) {
    /* loads, stores and read-modify-writes on one page: 10 + 10 + 2*10 = 40 */
    volatile int32_t *ld = malloc(2 * PAGE); /* @MALLOC */
    int32_t sink = 0;
    for (int i = 0; i < 10; i++) ld[i] = i;
    for (int i = 0; i < 10; i++) sink += ld[i];
    for (int i = 0; i < 10; i++) ld[i] += 1;
    (void)sink;
    /* an 8-byte store across the page boundary counts on both pages */
    volatile char *cross = aligned_alloc(PAGE, 2 * PAGE); /* @ALIGNED_ALLOC */
    *(volatile uint64_t *)(cross + PAGE - 4) = 1;
    volatile char *zeroed = calloc(2, PAGE); /* @CALLOC */
    zeroed[0] = 1;
    /* other allocation kinds */
    void *pm = NULL;
    if (posix_memalign(&pm, PAGE, PAGE) != 0) return 1; /* @POSIX_MEMALIGN */
    ((volatile char *)pm)[0] = 1;
    volatile char *grown = malloc(16);
    grown = realloc((void *)grown, 3 * PAGE); /* @REALLOC */
    grown[2 * PAGE] = 1;
    volatile char *region =
        mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* @MMAP */
    region[0] = 1;
    region[PAGE] = 2;
    region[PAGE + 1] = 3;
    /* a name given by the program */
    volatile char *fields = aligned_alloc(PAGE, PAGE); /* @NAMED */
    CLAMPI_LOCALITY_NAME(fields, "particle_fields");
    fields[0] = 1;
    /* static data: 7 stores on grid's second page */
    for (int i = 0; i < 7; i++) ((volatile double *)grid)[PAGE / sizeof(double) + i] = 1.0;
    /* small allocations are not structures (below --min-size) */
    volatile char *small = malloc(64);
    small[0] = 1;
    munmap((void *)region, 16 * PAGE);
    return 0;
}
