/* The sampler's MPI-free engine: page/counter tables (also under concurrent insertion)
 * and the CSV/JSON writer. (Struct names: cl_srcname.c, tested with the exact tool.) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "locality/out.h"
#include "locality/pages.h"

static clampi_ltab tab;

static void *inserter(void *arg) {
    int t = (int)(long)arg;
    for (uintptr_t p = 1; p <= 5000; p++) {
        clampi_lpage *r = clampi_ltab_get(&tab, p << 12);
        CHECK(r != NULL && atomic_load(&r->key) == p << 12);
        clampi_ltab_count_add(&tab, p << 12, (int)(p % 4), 1);
        clampi_ltab_count_add(&tab, p << 12, t + 4, 2);
    }
    return NULL;
}

static void test_tables(void) {
    size_t bytes = clampi_ltab_bytes(1 << 14, 1 << 16);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    clampi_ltab_init(&tab, mem, 1 << 14, 1 << 16);
    CHECK(clampi_ltab_find(&tab, 0x1000) == NULL);
    pthread_t th[4];
    for (long t = 0; t < 4; t++) pthread_create(&th[t], NULL, inserter, (void *)t);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (uintptr_t p = 1; p <= 5000; p++) {
        CHECK(clampi_ltab_find(&tab, p << 12) != NULL);
        CHECK_EQ_INT(clampi_ltab_count_get(&tab, p << 12, (int)(p % 4)), 4);
        for (int t = 4; t < 8; t++) CHECK_EQ_INT(clampi_ltab_count_get(&tab, p << 12, t), 2);
    }
    CHECK_EQ_INT(clampi_ltab_count_get(&tab, 0x1000, 9), 0);
    CHECK_EQ_INT(atomic_load(&tab.dropped), 0);
    /* first touch: once */
    clampi_lpage *p = clampi_ltab_get(&tab, 0x7000);
    CHECK(clampi_ltab_first_touch(&tab, p, 2, 0x400123, NULL, 5) == 1);
    CHECK(clampi_ltab_first_touch(&tab, p, 1, 0x400999, NULL, 6) == 0);
    CHECK(p->ft_thread == 2 && p->ft_ip == 0x400123);
    /* a full table drops and counts, never blocks */
    void *small = mmap(NULL, clampi_ltab_bytes(64, 64), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    clampi_ltab st;
    clampi_ltab_init(&st, small, 64, 64);
    int got = 0;
    for (uintptr_t q = 1; q <= 100; q++) got += clampi_ltab_get(&st, q << 12) != NULL;
    CHECK(got == 48 && atomic_load(&st.dropped) == 52);
}

static const char *fake_loc(uintptr_t ip, void *arg, char *buf, size_t n) {
    snprintf(buf, n, "prog.c:%d", (int)(ip & 0xfff));
    return buf;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_writer(void) {
    clampi_lalloc al[2];
    memset(al, 0, sizeof al);
    /* given out of address order: the writer sorts */
    al[0] = (clampi_lalloc){.start = 0x9020000,
                            .size = 8192,
                            .map_start = 0x9020000,
                            .map_size = 8192,
                            .thread = 1,
                            .kind = CLAMPI_LA_CALLOC,
                            .nframes = 1,
                            .frames = {0x40002b}};
    al[1] = (clampi_lalloc){.start = 0x9010000,
                            .size = 4096,
                            .map_start = 0x9010000,
                            .map_size = 4096,
                            .thread = 0,
                            .kind = CLAMPI_LA_MALLOC,
                            .nframes = 1,
                            .frames = {0x40001b},
                            .name = "grid"};
    clampi_lpage *p = clampi_ltab_get(&tab, 0x9020000);
    clampi_ltab_first_touch(&tab, p, 1, 0x400007, NULL, 9);
    clampi_ltab_count_add(&tab, 0x9020000, 0, 3);
    clampi_ltab_count_add(&tab, 0x9020000, 1, 1);
    char dir[] = "/tmp/clampi_lout_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    uint64_t work[2] = {10, 20};
    uint32_t scratch[2];
    char *argv[] = {"./prog", "a\"b"};
    clampi_lout o = {.dir = dir,
                     .rank = 3,
                     .pid = 42,
                     .argc = 2,
                     .argv = argv,
                     .mode = "sample",
                     .counts = "sampled",
                     .page_size = 4096,
                     .sys_page = 4096,
                     .min_size = 4096,
                     .complete = 1,
                     .has_exit_status = 1,
                     .exit_status = 0,
                     .nthreads = 2,
                     .thread_work = work,
                     .work_unit = "cpu_ns",
                     .tab = &tab,
                     .count_scale = 2.0,
                     .allocs = al,
                     .nallocs = 2,
                     .scratch = scratch,
                     .loc = fake_loc};
    CHECK(clampi_lout_write(&o) == 0);
    char path[128];
    snprintf(path, sizeof path, "%s/rank3.csv", dir);
    const char *csv = slurp(path);
    const char *want = "address,alloc.thread,alloc.location,firsttouch.thread,firsttouch.location,struct.name,T0,T1\n"
                       "0x9010000,0,prog.c:27,-1,?,grid,0,0\n"
                       "0x9020000,1,prog.c:43,1,prog.c:7,alloc@prog.c:43,6,2\n"
                       "0x9021000,1,prog.c:43,-1,?,alloc@prog.c:43,0,0\n";
    if (strcmp(csv, want) != 0) {
        fprintf(stderr, "csv:\n%s\nwant:\n%s", csv, want);
        CHECK(0);
    }
    snprintf(path, sizeof path, "%s/rank3.json", dir);
    const char *js = slurp(path);
    CHECK(strstr(js, "\"program\": [\"./prog\", \"a\\\"b\"]"));
    CHECK(strstr(js, "\"thread_accesses\": [6, 2]"));
    CHECK(strstr(js, "\"complete\": true"));
    CHECK(strstr(js, "\"kind\": \"calloc\""));
    CHECK(strstr(js, "\"counts\": \"sampled\""));
    snprintf(path, sizeof path, "rm -rf %s", dir);
    CHECK(system(path) == 0);
}

int main(void) {
    test_tables();
    test_writer();
    printf("locality engine: ok\n");
    return 0;
}
