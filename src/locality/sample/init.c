/* Library start-up and shutdown: options from the environment (read here only), the
 * tables, the fault handler, the sampler thread, and the output at exit. */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/options.h"

ls_state ls = {.alloc_lock = PTHREAD_MUTEX_INITIALIZER};

static int env_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = getenv(vars[i]);
        if (s && *s) return atoi(s);
    }
    return 0;
}

/* The sampler's knobs, through clampi's options table (common/options.h). */
static void read_options(void) {
    ls.sys_page = (size_t)sysconf(_SC_PAGESIZE);
    ls.page_size = (size_t)clampi_opt_process(CLAMPI_OPT_LOCALITY_PAGE_SIZE).u;
    if (ls.page_size < ls.sys_page || (ls.page_size & (ls.page_size - 1))) {
        fprintf(stderr, "clampi-locality: page size %zu must be a power of two >= %zu; using %zu\n", ls.page_size,
                ls.sys_page, ls.sys_page);
        ls.page_size = ls.sys_page;
    }
    ls.min_size = clampi_opt_process_source(CLAMPI_OPT_LOCALITY_MIN_SIZE) == CLAMPI_OPT_FROM_DEFAULT
                      ? ls.page_size
                      : (size_t)clampi_opt_process(CLAMPI_OPT_LOCALITY_MIN_SIZE).u;
    snprintf(ls.out_dir, sizeof ls.out_dir, "%s", clampi_opt_process(CLAMPI_OPT_LOCALITY_OUT).text);
    ls.period_ms = (unsigned)clampi_opt_process(CLAMPI_OPT_LOCALITY_SAMPLE_PERIOD_MS).u;
    ls.pages_per_round = (unsigned)clampi_opt_process(CLAMPI_OPT_LOCALITY_SAMPLE_PAGES).u;
    ls.run_pages = (unsigned)clampi_opt_process(CLAMPI_OPT_LOCALITY_SAMPLE_RUN).u;
    ls.ahead_pages = (unsigned)clampi_opt_process(CLAMPI_OPT_LOCALITY_SAMPLE_AHEAD).u;
    ls.rank = env_rank();
    ls.max_pages = (size_t)clampi_opt_process(CLAMPI_OPT_LOCALITY_MAX_PAGES).u;
}

/* MPI shared-memory single-copy paths (CMA: the kernel reads the peer's pages) fail with
 * EFAULT on pages the sampler has protected; use the copy-in/copy-out paths instead,
 * unless the user chose otherwise. Same for UCX's memory hooks (below). */
static const char *const quiet_defaults[][2] = {
    {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"},
    {"UCX_TLS", "^cma"},
    /* UCX's memory hooks patch the code of mmap (and replace malloc), which would bypass
     * this library's wrappers for every later mapping (MPICH's shared windows among them) */
    {"UCX_MEM_MMAP_HOOK_MODE", "none"},
    {"UCX_MEM_MALLOC_HOOKS", "n"},
    {"UCX_MEM_MALLOC_RELOC", "n"},
    {"UCX_MEM_EVENTS", "n"},
};

static void quiet_single_copy(void) {
    for (size_t i = 0; i < sizeof quiet_defaults / sizeof quiet_defaults[0]; i++)
        setenv(quiet_defaults[i][0], quiet_defaults[i][1], 0);
}

/* Libraries that read those variables in their own constructors (libucs) may run before
 * ours: getenv answers with the defaults above for variables the user did not set. Same
 * lookup as glibc's otherwise. */
extern char **environ;
CLAMPI_API char *getenv(const char *name) {
    size_t n = strlen(name);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    for (size_t i = 0; i < sizeof quiet_defaults / sizeof quiet_defaults[0]; i++)
        if (strcmp(name, quiet_defaults[i][0]) == 0) return (char *)quiet_defaults[i][1];
    return NULL;
}

/* Children are not traced (as Valgrind's default --trace-children=no): drop this library
 * from LD_PRELOAD, so that e.g. the daemon Open MPI starts for a singleton MPI_Init does
 * not write its own rank0 files over the program's. */
static void untrace_children(void) {
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "libclampi_locality_sample")) return;
    char keep[4096] = "";
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", pre);
    for (char *save = NULL, *tok = strtok_r(buf, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
        if (strstr(tok, "libclampi_locality_sample")) continue;
        if (keep[0]) strncat(keep, ":", sizeof keep - strlen(keep) - 1);
        strncat(keep, tok, sizeof keep - strlen(keep) - 1);
    }
    if (keep[0])
        setenv("LD_PRELOAD", keep, 1);
    else
        unsetenv("LD_PRELOAD");
}

static void at_exit(int status, void *arg) {
    if (getpid() != ls.pid) /* a forked child that did not exec: not our process */
        return;
    ls_write_output(1, 1, status, NULL, 1);
}

/* A program that ends with _exit() (or _Exit, quick_exit) skips on_exit: write the
 * output here. A forked child's _exit is not the traced process's. */
static void exit_now(int status) {
    if (getpid() == ls.pid) ls_write_output(1, 1, status, NULL, 1);
}

CLAMPI_API void _exit(int status) {
    exit_now(status);
    for (;;) syscall(SYS_exit_group, status);
}
CLAMPI_API void _Exit(int status) __attribute__((alias("_exit")));

CLAMPI_API void quick_exit(int status) {
    exit_now(status);
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "quick_exit");
    if (real) real(status);
    for (;;) syscall(SYS_exit_group, status);
}

static void read_cmdline(void) {
    /* /proc/self/cmdline: argv as the kernel has it (main's argv is not ours to see). */
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f) return;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    static char *argv[128];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 127; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    ls.argc = argc;
    ls.argv = argv;
}

/* The parent process has this library loaded: this is a child of the traced program that
 * still got the preload (Open MPI's singleton starts its `orted` daemon with an
 * environment from before untrace_children ran), and its output would replace the
 * program's rank files at its exit, which comes after the program's. */
static int parent_is_traced(void) {
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)getppid());
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int traced = 0;
    while (!traced && fgets(line, sizeof line, f)) traced = strstr(line, "libclampi_locality_sample") != NULL;
    fclose(f);
    return traced;
}

__attribute__((constructor)) static void ls_init(void) {
    read_options();
    ls.pid = getpid();
    quiet_single_copy();
    untrace_children();
    if (parent_is_traced()) return; /* children are not traced */
    read_cmdline();
    ls_thread_main_init();
    ls.pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (ls_alloc_init() != 0 || ls_fault_init() != 0) {
        fprintf(stderr, "clampi-locality: cannot set up the sampler (%s); not tracing\n", strerror(errno));
        return;
    }
    on_exit(at_exit, NULL);
    ls_statics_init();
    mkdir(ls.out_dir, 0755);
    ls_write_maps(); /* load bases even if the run is killed before any output */
    ls_lease_init(); /* the protection keys and the main thread's rights to them */
    atomic_store(&ls.ready, 1);
    ls_sampler_start();
}
