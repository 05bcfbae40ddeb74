/* After the run: instruction addresses -> "file.c:123" with addr2line (binutils), and
 * struct names read from the allocation's source line. Runs at exit, outside any signal
 * handler; allocates with glibc (ls_in_lib is set by the caller). */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include "cl_srcname.h"

#include <ctype.h>
#include <errno.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_INLINE 24

typedef struct res {
    uintptr_t ip;
    int n; /* inline chain, innermost first */
    char *path[MAX_INLINE];
    int line[MAX_INLINE];
    int user;  /* index of the first entry in the program's own code, -1 */
    char need; /* a fallback location needs its line (a system library's) */
} res;

typedef struct module {
    uintptr_t lo, hi, base;
    int dyn;
    char path[512];
} module;

static res *results;
static size_t nresults, capresults;
static module *mods;
static size_t nmods;

static void read_maps(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[1024];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off;
        char perms[8], path[512] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %511s", &lo, &hi, perms, &off, path) < 4 || path[0] != '/') continue;
        if (nmods == cap) {
            cap = cap ? 2 * cap : 64;
            mods = realloc(mods, cap * sizeof *mods);
        }
        module *m = &mods[nmods++];
        m->lo = lo;
        m->hi = hi;
        snprintf(m->path, sizeof m->path, "%s", path);
        /* load base: the module's mapping at file offset 0 (holds the ELF header) */
        m->base = off == 0 ? lo : 0;
        for (size_t i = 0; m->base == 0 && i + 1 < nmods; i++)
            if (strcmp(mods[i].path, path) == 0) m->base = mods[i].base;
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->base;
        m->dyn = m->base && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_type == ET_DYN;
    }
    fclose(f);
}

static const module *module_of(uintptr_t ip) {
    for (size_t i = 0; i < nmods; i++)
        if (ip >= mods[i].lo && ip < mods[i].hi) return &mods[i];
    return NULL;
}

static int cmp_res(const void *a, const void *b) {
    uintptr_t x = ((const res *)a)->ip, y = ((const res *)b)->ip;
    return x < y ? -1 : x > y;
}

static res *find(uintptr_t ip) {
    res key = {.ip = ip};
    return nresults ? bsearch(&key, results, nresults, sizeof *results, cmp_res) : NULL;
}

/* The addresses already wanted: every page of a large array first-touched by one loop
 * has the same instruction, so results stay as small as the distinct addresses (sorting
 * a result per page was most of the exit time on large arrays). */
static uintptr_t *seen;
static size_t seen_cap, seen_n;

static int seen_before(uintptr_t ip) {
    if (2 * (seen_n + 1) > seen_cap) {
        size_t cap = seen_cap ? 2 * seen_cap : 4096;
        uintptr_t *t = calloc(cap, sizeof *t);
        if (!t) return 0;
        for (size_t i = 0; i < seen_cap; i++)
            if (seen[i])
                for (size_t h = (seen[i] * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);; h = (h + 1) & (cap - 1))
                    if (!t[h]) {
                        t[h] = seen[i];
                        break;
                    }
        free(seen);
        seen = t;
        seen_cap = cap;
    }
    for (size_t h = (ip * 0x9e3779b97f4a7c15ull) >> 20 & (seen_cap - 1);; h = (h + 1) & (seen_cap - 1)) {
        if (seen[h] == ip) return 1;
        if (!seen[h]) {
            seen[h] = ip;
            seen_n++;
            return 0;
        }
    }
}

static void want(uintptr_t ip) {
    if (ip == 0 || seen_before(ip)) return;
    if (nresults == capresults) {
        capresults = capresults ? 2 * capresults : 1024;
        results = realloc(results, capresults * sizeof *results);
    }
    memset(&results[nresults], 0, sizeof *results);
    results[nresults].ip = ip;
    results[nresults].user = -1;
    nresults++;
}

/* Lines in a source file (0 = unreadable), from the source cache the naming reads later.
 * addr2line 2.40 names the wrong file for some DWARF 5 line entries (a line of
 * stl_algobase.h reported as the program's main.cc:922, in an 11-line file): such an entry
 * is not the program's line. */
static int file_lines(const char *path) { return ls_source_lines(ls_source_open(path)); }

/* The C++ standard library's code instantiated in (or inlined into) the program: by the
 * function's name (addr2line -f -C), whatever file the line table names. */
static int is_std_function(const char *fn) {
    static const char *const prefixes[] = {"std::",   "__gnu_cxx::", "void std::", "operator new", "__cxa", "__gnu_",
                                           "__libc_", "_IO_",        NULL};
    for (int i = 0; prefixes[i]; i++)
        if (strncmp(fn, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    /* a template function's demangled name may start with its return type */
    const char *paren = strchr(fn, '(');
    const char *std = strstr(fn, " std::");
    return std && (!paren || std < paren) && strchr(fn, ' ') == std;
}

/* The program's own code: not a system library (/usr/lib, /lib), not a system header
 * inlined into the program (/usr/include), not clampi's own allocators. */
/* A module of clampi's own (libclampi*.so: the sampler, clampi's allocators). */
static int is_clampi_module(const module *m) {
    const char *b = strrchr(m->path, '/');
    return strncmp(b ? b + 1 : m->path, "libclampi", 9) == 0;
}

static int is_user_path(const char *path, const module *m) {
    if (path == NULL || strncmp(path, "/usr/", 5) == 0 || strncmp(m->path, "/usr/lib", 8) == 0 ||
        strncmp(m->path, "/lib", 4) == 0)
        return 0;
    return !is_clampi_module(m); /* clampi's own allocators: report their caller */
}

/* An address in clampi's own code (the sampler's thread trampoline starts every thread):
 * never a location of the program's data, even where it is the only frame with a line. */
static int in_clampi(uintptr_t ip) {
    const module *m = module_of(ip);
    return m && is_clampi_module(m);
}

/* Whether addr2line can find any line for the module: its own .debug_line, or a separate
 * debug file by build id (/usr/lib/debug/.build-id/ab/cdef....debug) or by debug link.
 * Most system libraries have neither: their addresses would all come back "??", and
 * running addr2line on them was most of the sampler's exit time. */
/* [off, off + len) inside a file of size bytes, without overflow. */
static int in_file(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

static int has_line_info(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    void *map = fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(Elf64_Ehdr)
                    ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                    : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) return 0;
    const unsigned char *b = map;
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    int found = 0;
    /* a module the loader mapped, but read as untrusted bytes all the same */
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum ||
        !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
        goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    if (strs->sh_type == SHT_NOBITS || !in_file(strs->sh_offset, strs->sh_size, size)) goto out;
    const char *names = (const char *)b + strs->sh_offset;
    char dir[512], cand[1100];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    for (int i = 0; i < eh->e_shnum && !found; i++) {
        if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_name >= strs->sh_size ||
            !in_file(sh[i].sh_offset, sh[i].sh_size, size) ||
            !memchr(names + sh[i].sh_name, 0, strs->sh_size - sh[i].sh_name)) /* a terminated name */
            continue;
        const char *name = names + sh[i].sh_name;
        const unsigned char *data = b + sh[i].sh_offset;
        const uint64_t len = sh[i].sh_size;
        if (strcmp(name, ".debug_line") == 0 || strcmp(name, ".zdebug_line") == 0) {
            found = 1;
        } else if (strcmp(name, ".note.gnu.build-id") == 0 && len > sizeof(Elf64_Nhdr)) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)data;
            const uint64_t at = sizeof *nh + (((uint64_t)nh->n_namesz + 3) & ~(uint64_t)3); /* the id's offset */
            if (nh->n_type != NT_GNU_BUILD_ID || nh->n_descsz < 2 || nh->n_descsz > 64 ||
                !in_file(at, nh->n_descsz, len))
                continue;
            const unsigned char *id = data + at;
            int k = snprintf(cand, sizeof cand, "/usr/lib/debug/.build-id/%02x/", id[0]);
            for (unsigned j = 1; j < nh->n_descsz; j++) k += snprintf(cand + k, sizeof cand - k, "%02x", id[j]);
            snprintf(cand + k, sizeof cand - k, ".debug");
            found = access(cand, R_OK) == 0;
        } else if (strcmp(name, ".gnu_debuglink") == 0 && len > 0 && memchr(data, 0, len)) {
            const char *link = (const char *)data;
            const char *fmt[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
            for (int f = 0; f < 3 && !found; f++) {
                snprintf(cand, sizeof cand, fmt[f], dir, link);
                found = strcmp(cand, path) != 0 && access(cand, R_OK) == 0;
            }
        }
    }
out:
    munmap(map, size);
    return found;
}

/* One addr2line run per module, addresses in a file and answers in another; all modules'
 * runs at once (they are independent, and each mostly reads its module). */
typedef struct a2l_run {
    const module *m;
    size_t from, to;
    pid_t pid;
    char in[600], out[600];
} a2l_run;

static int spawn_addr2line(a2l_run *r, int seq) {
    const module *m = r->m;
    snprintf(r->in, sizeof r->in, "%s/.a2l.%d.%d.in", ls.out_dir, (int)getpid(), seq);
    snprintf(r->out, sizeof r->out, "%s/.a2l.%d.%d.out", ls.out_dir, (int)getpid(), seq);
    FILE *f = fopen(r->in, "w");
    if (!f) return 0;
    for (size_t i = r->from; i < r->to; i++)
        fprintf(f, "0x%lx\n", (unsigned long)(m->dyn ? results[i].ip - m->base : results[i].ip));
    fclose(f);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, r->in, O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, r->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"addr2line", "-a", "-i", "-f", "-C", "-e", (char *)m->path, NULL};
    /* no LD_PRELOAD for the helper */
    static char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
    int ok = posix_spawnp(&r->pid, "addr2line", &fa, NULL, argv, env) == 0;
    posix_spawn_file_actions_destroy(&fa);
    if (!ok) {
        unlink(r->in);
        unlink(r->out);
    }
    return ok;
}

static void parse_addr2line(const a2l_run *r) {
    const module *m = r->m;
    size_t from = r->from, to = r->to;
    FILE *f = fopen(r->out, "r");
    if (f) {
        char line[4096], fn[4096] = "";
        res *cur = NULL;
        size_t i = from;
        /* -a -i -f: "0x<addr>", then per inline level (innermost first) a function line
         * and a file:line line */
        enum { ADDR_OR_FN, FN, LOC } want = ADDR_OR_FN;
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (want == ADDR_OR_FN && strncmp(line, "0x", 2) == 0) {
                cur = i < to ? &results[i++] : NULL;
                want = FN;
                continue;
            }
            if (want != LOC) {
                snprintf(fn, sizeof fn, "%s", line);
                want = LOC;
                continue;
            }
            want = ADDR_OR_FN;
            if (!cur || cur->n == MAX_INLINE) continue;
            char *d = strstr(line, " (discriminator");
            if (d) *d = 0;
            char *colon = strrchr(line, ':');
            if (!colon || strncmp(line, "??", 2) == 0) continue;
            *colon = 0;
            int ln = atoi(colon + 1);
            if (ln <= 0) continue;
            cur->path[cur->n] = strdup(line);
            cur->line[cur->n] = ln;
            if (cur->user < 0 && is_user_path(line, m) && !is_std_function(fn)) {
                int nl = file_lines(line);
                if (nl == 0 || ln <= nl) cur->user = cur->n;
            }
            cur->n++;
        }
        fclose(f);
    }
    unlink(r->out);
}

static const module *mod_cmp_tab;
static int cmp_by_module(const void *a, const void *b) {
    const module *x = module_of(((const res *)a)->ip), *y = module_of(((const res *)b)->ip);
    (void)mod_cmp_tab;
    if (x != y) return x < y ? -1 : 1;
    return cmp_res(a, b);
}

/* A system library: its lines are never the program's (is_user_path). */
static int system_module(const module *m) {
    return strncmp(m->path, "/usr/lib", 8) == 0 || strncmp(m->path, "/lib", 4) == 0;
}

/* One pass over the modules of `results` (sorted by module): the program's (pass 0), or
 * the system libraries holding an address a fallback needs (pass 1). */
/* At most this many addr2line processes at once (every rank of a node exits together). */
#define A2L_PARALLEL 4

static void reap(a2l_run *r) {
    int st;
    while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
        ;
    unlink(r->in);
    parse_addr2line(r);
}

static void run_addr2line_pass(int pass) {
    a2l_run *runs = calloc(nmods, sizeof *runs);
    size_t nruns = 0, reaped = 0;
    for (size_t i = 0; i < nresults && runs;) {
        const module *m = module_of(results[i].ip);
        size_t j = i + 1;
        int need = results[i].need;
        while (j < nresults && module_of(results[j].ip) == m) need |= results[j++].need;
        if (m && system_module(m) == pass && (pass == 0 || need) && has_line_info(m->path)) {
            if (nruns - reaped == A2L_PARALLEL) reap(&runs[reaped++]);
            runs[nruns] = (a2l_run){.m = m, .from = i, .to = j};
            if (spawn_addr2line(&runs[nruns], (int)nruns)) nruns++;
        }
        i = j;
    }
    while (reaped < nruns) reap(&runs[reaped++]);
    free(runs);
}

static void mark(uintptr_t ip, int *any) {
    res *r = find(ip);
    if (r) *any = r->need = 1;
}

static const res *ft_user(const clampi_lpage *p, int *k);
static const res *alloc_site_frame(const clampi_lalloc *a, int *k, int *frame);

/* After the program's modules: mark the addresses whose line a fallback uses (pages
 * and allocations with no frame in the program). Returns whether there are any. */
static int mark_fallbacks(void) {
    int any = 0, k, frame;
    size_t n = atomic_load(&ls.tab.ntouched);
    if (n > ls.tab.page_cap) n = ls.tab.page_cap;
    for (size_t i = 0; i < n; i++) {
        const clampi_lpage *p = clampi_ltab_slot(&ls.tab, ls.tab.touched[i]);
        if (!ft_user(p, &k)) mark(p->ft_ip, &any); /* ls_resolve_ft_loc's fallback: that line */
    }
    size_t na = atomic_load(&ls.nallocs);
    for (size_t i = 0; i < na; i++)
        if (!alloc_site_frame(&ls.allocs[i], &k, &frame))
            /* ls_resolve_alloc_loc's fallback: the innermost frame with a line; frames
             * outside a line already known can be it */
            for (int f = 0; f < ls.allocs[i].nframes; f++) {
                if (in_clampi(ls.allocs[i].frames[f])) continue;
                const res *r = find(ls.allocs[i].frames[f] - 1);
                if (r && r->n > 0) break;
                mark(ls.allocs[i].frames[f] - 1, &any);
            }
    return any;
}

void ls_resolve_run(void) {
    read_maps();
    size_t n = atomic_load(&ls.tab.ntouched);
    if (n > ls.tab.page_cap) n = ls.tab.page_cap;
    for (size_t i = 0; i < n; i++) {
        const clampi_lpage *p = clampi_ltab_slot(&ls.tab, ls.tab.touched[i]);
        want(p->ft_ip);
        for (int k = 0; k < CLAMPI_LP_FRAMES && p->ft_frames[k]; k++) want(p->ft_frames[k] - 1);
    }
    uint32_t ns = atomic_load(&ls.nstacks);
    if (ns > ls.stack_cap) ns = ls.stack_cap;
    for (uint32_t i = 0; i < ns; i++)
        for (int k = 0; k < LS_STACK_DEPTH && ls.stacks[i][k]; k++) want(ls.stacks[i][k] - 1);
    size_t na = atomic_load(&ls.nallocs);
    for (size_t i = 0; i < na; i++)
        for (int k = 0; k < ls.allocs[i].nframes; k++) want(ls.allocs[i].frames[k] - 1);
    if (nresults == 0) return;
    qsort(results, nresults, sizeof *results, cmp_by_module);
    size_t w = 1; /* unique */
    for (size_t i = 1; i < nresults; i++)
        if (results[i].ip != results[w - 1].ip) results[w++] = results[i];
    nresults = w;
    /* The program's modules first: they give the locations. A system library's lines are
     * only a fallback (a first touch or an allocation with no frame in the program), so
     * those are resolved only where such a fallback needs them: addr2line on libc's
     * separate debug information was most of the exit time. */
    run_addr2line_pass(0);
    qsort(results, nresults, sizeof *results, cmp_res);
    if (mark_fallbacks()) {
        qsort(results, nresults, sizeof *results, cmp_by_module);
        run_addr2line_pass(1);
    }
    qsort(results, nresults, sizeof *results, cmp_res);
}

static const char *format(const res *r, int k, char *buf, size_t n) {
    const char *b = strrchr(r->path[k], '/');
    snprintf(buf, n, "%s:%d", b ? b + 1 : r->path[k], r->line[k]);
    return buf;
}

const char *ls_resolve_loc(uintptr_t ip, void *arg, char *buf, size_t n) {
    (void)arg;
    const res *r = find(ip);
    return r && r->user >= 0 ? format(r, r->user, buf, n) : NULL;
}

/* firsttouch.location: the touching instruction if it is in the program, else the first
 * caller in the program, else the innermost line known (e.g. clampi's own alloc.c from
 * an OpenMP worker), else NULL (hex). */
/* The frames recorded for a page's first touch: the whole stack where it was kept, else
 * the page's few. */
static const uintptr_t *ft_frames_of(const clampi_lpage *p, int *depth) {
    if (p->ft_stack && p->ft_stack <= ls.stack_cap) {
        *depth = LS_STACK_DEPTH;
        return ls.stacks[p->ft_stack - 1];
    }
    *depth = CLAMPI_LP_FRAMES;
    return p->ft_frames;
}

/* The first touch's location in the program: the touching instruction, else its first
 * caller in the program; NULL if none. */
/* The first of n return addresses (0 ends them early) whose call is in the program's own
 * code: its line index in *k, its position in *at (n if none). */
static const res *first_user_frame(const uintptr_t *frames, int n, int *k, int *at) {
    for (int f = 0; f < n && frames[f]; f++) {
        const res *r = find(frames[f] - 1);
        if (r && r->user >= 0) {
            *k = r->user;
            *at = f;
            return r;
        }
    }
    *at = n;
    return NULL;
}

static const res *ft_user(const clampi_lpage *p, int *k) {
    const res *r = find(p->ft_ip);
    if (r && r->user >= 0) {
        *k = r->user;
        return r;
    }
    int depth, at;
    const uintptr_t *frames = ft_frames_of(p, &depth);
    return first_user_frame(frames, depth, k, &at);
}

const char *ls_resolve_ft_loc(const clampi_lpage *p, void *arg, char *buf, size_t n) {
    (void)arg;
    int k;
    const res *u = ft_user(p, &k);
    if (u) return format(u, k, buf, n);
    const res *r = find(p->ft_ip);
    return r && r->n > 0 ? format(r, 0, buf, n) : NULL;
}

/* The allocation's site: the first frame in the program's own code (the caller of
 * malloc, or of the std::vector / clampi allocator that allocated). */
static const res *alloc_site_frame(const clampi_lalloc *a, int *k, int *frame) {
    return first_user_frame(a->frames, a->nframes, k, frame);
}

static const res *alloc_site(const clampi_lalloc *a, int *k) {
    int frame;
    return alloc_site_frame(a, k, &frame);
}

/* A library made the allocation for itself (Open MPI's calloc inside
 * MPI_Win_allocate_shared): its name, not the program's variable.
 * Decided by the allocator's caller (the innermost frame outside libstdc++/libgcc, which
 * allocate on the program's behalf): the program, or a library. Exempt: memory that an
 * allocation API hands to the program (MPI_Alloc_mem anywhere on the way; clampi's
 * allocation functions, CMPI_Alloc_mem, clampi_numa_alloc..., as the caller) and
 * mappings (a shared window's segment). Named after the outermost such library below
 * the program's frame (the one the program called: libmpi, not an MCA component). */
static const char *owner_library(const clampi_lalloc *a, int upto) {
    static char exe[512];
    if (!exe[0]) {
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[k > 0 ? k : 0] = 0;
    }
    if (a->kind == CLAMPI_LA_MMAP || a->kind == CLAMPI_LA_STATIC) return NULL;
    const char *lib = NULL;
    int caller = 1;
    for (int i = 0; i < upto; i++) {
        const module *m = module_of(a->frames[i]);
        if (!m) continue;
        if (strcmp(m->path, exe) == 0) return NULL; /* the program itself called the allocator */
        const char *b = strrchr(m->path, '/');
        b = b ? b + 1 : m->path;
        if (strncmp(b, "libstdc++", 9) == 0 || strncmp(b, "libgcc_s", 8) == 0) continue;
        Dl_info di;
        const char *fn = dladdr((void *)a->frames[i], &di) && di.dli_sname ? di.dli_sname : "";
        if (strcmp(fn, "MPI_Alloc_mem") == 0 || strcmp(fn, "PMPI_Alloc_mem") == 0) return NULL;
        if (caller && strncmp(b, "libclampi", 9) == 0 && strstr(fn, "lloc") && !strstr(fn, "Win_")) return NULL;
        caller = 0;
        if (!lib || strncmp(b, "libclampi", 9) != 0) lib = b;
    }
    return lib;
}

const char *ls_resolve_alloc_loc(const clampi_lalloc *a, void *arg, char *buf, size_t n) {
    (void)arg;
    int k;
    const res *r = alloc_site(a, &k);
    if (r) return format(r, k, buf, n);
    /* inside a library (MPI's own buffers): its innermost known line, else unknown */
    for (int i = 0; i < a->nframes; i++)
        if (!in_clampi(a->frames[i]) && (r = find(a->frames[i] - 1)) && r->n > 0) return format(r, 0, buf, n);
    return "?";
}

static int source_line(const char *path, int line, char *buf, size_t n) {
    return ls_source_line(ls_source_open(path), line, buf, n);
}

/* A statement split over lines (cl_srcname_split_members): the names on `src`, line `line`
 * of path, read with the lines around it. */
#define CONTEXT_LINES 16
static int split_members(const char *path, int line, const char *src, char *names, size_t cap, int max) {
    static char before[CONTEXT_LINES][1024], after[CONTEXT_LINES][1024];
    const char *prev[CONTEXT_LINES], *next[CONTEXT_LINES];
    const ls_source *f = ls_source_open(path);
    int np = 0, nn = 0;
    if (!f) return 0;
    /* before[0] and after[0]: the nearest lines */
    while (np < CONTEXT_LINES && line - 1 - np >= 1 && ls_source_line(f, line - 1 - np, before[np], sizeof before[0]))
        np++;
    while (nn < CONTEXT_LINES && ls_source_line(f, line + 1 + nn, after[nn], sizeof after[0])) nn++;
    for (int i = 0; i < np; i++) prev[i] = before[i];
    for (int i = 0; i < nn; i++) next[i] = after[i];
    return cl_srcname_split_members(prev, np, src, next, nn, names, cap, max);
}

/* The allocation sites in the program's code (distinct call instructions), once. */
typedef struct site {
    const res *r;
    int k;
} site;
static site *sites;
static size_t nsites;

static int cmp_site(const void *a, const void *b) { return cmp_res(((const site *)a)->r, ((const site *)b)->r); }

static void collect_sites(void) {
    static int done;
    if (done) return;
    done = 1;
    size_t na = atomic_load(&ls.nallocs);
    sites = malloc((na ? na : 1) * sizeof *sites);
    if (!sites) return;
    for (size_t i = 0; i < na; i++) {
        int k;
        const res *r = alloc_site(&ls.allocs[i], &k);
        if (r) sites[nsites++] = (site){r, k};
    }
    qsort(sites, nsites, sizeof *sites, cmp_site);
    size_t w = 0;
    for (size_t i = 0; i < nsites; i++)
        if (w == 0 || sites[i].r != sites[w - 1].r) sites[w++] = sites[i];
    nsites = w;
}

/* Several allocations on one line (a C++ constructor's members, a Fortran allocate list):
 * the sites, distinct instructions of that line, follow the names' order in the code.
 * Which one is r's, of how many? */
static void line_sites(const res *r, int k, int *rank, int *count) {
    collect_sites();
    *rank = *count = 0;
    for (size_t i = 0; i < nsites; i++) {
        const site *o = &sites[i];
        if (o->r->line[o->k] != r->line[k] || strcmp(o->r->path[o->k], r->path[k]) != 0) continue;
        ++*count;
        if (o->r->ip < r->ip) ++*rank;
    }
}

/* The variable a line assigns (cl_srcname.h), also when the statement began on the line
 * before ("double *u =" / "malloc(n);"). */
static int name_on_line(const char *path, int line, char *buf, size_t n) {
    char src[1024], prev[1024];
    if (!source_line(path, line, src, sizeof src)) return 0;
    int has_prev = line > 1 && source_line(path, line - 1, prev, sizeof prev);
    return cl_srcname_from_statement(has_prev ? prev : NULL, src, buf, n);
}

/* Does the function that allocated on `line` return `name` further down (an allocation
 * wrapper naming its own variable: "T *p = malloc(n); ... return p;")? Read up to the end
 * of the function (a '}' indented less than the allocation), at most 64 lines. */
static int returned_later(const char *path, int line, const char *name) {
    const ls_source *f = ls_source_open(path);
    char at[1024], src[1024];
    if (!ls_source_line(f, line, at, sizeof at)) return 0;
    for (int k = line + 1; k <= line + 64 && ls_source_line(f, k, src, sizeof src); k++) {
        if (cl_srcname_returns(src, name)) return 1;
        if (cl_srcname_closes(at, src)) break;
    }
    return 0;
}

/* An allocation wrapper's line names nothing ("return static_cast<T *>(malloc(n));" in
 * LULESH's Allocate<T>): the variable its caller assigns the result to, on the next lines
 * of the program outward (inlined callers, then calling frames), up to OUTER_LINES. */
#define OUTER_LINES 3
static int name_from_callers(const clampi_lalloc *a, const res *r, int k, int frame, char *buf, size_t n) {
    int tried = 0;
    for (int f = frame; f < a->nframes && tried < OUTER_LINES; f++) {
        const res *o = f == frame ? r : find(a->frames[f] - 1);
        if (!o || o->user < 0) continue;
        const module *m = module_of(o->ip);
        for (int j = f == frame ? k + 1 : o->user; j < o->n && tried < OUTER_LINES; j++) {
            if (!m || !is_user_path(o->path[j], m)) continue;
            tried++;
            if (name_on_line(o->path[j], o->line[j], buf, n)) return 1;
        }
    }
    return 0;
}

const char *ls_resolve_name(const clampi_lalloc *a, void *arg, char *buf, size_t n) {
    (void)arg;
    int k, frame;
    const res *r = alloc_site_frame(a, &k, &frame);
    char src[1024];
    const char *lib = owner_library(a, frame);
    if (lib) {
        snprintf(buf, n, "alloc@%s", lib);
        return buf;
    }
    if (r && source_line(r->path[k], r->line[k], src, sizeof src)) {
        char members[8][128];
        int m = cl_srcname_members(src, &members[0][0], sizeof members[0], 8), rank = 0, count = 1;
        if (m == 0) m = split_members(r->path[k], r->line[k], src, &members[0][0], sizeof members[0], 8);
        if (m > 1) line_sites(r, k, &rank, &count);
        if (m > count) { /* more names than allocations: an initializer list's scalars allocate nothing */
            const char *text = ls_source_text(ls_source_open(r->path[k]));
            if (text) m = cl_srcname_keep_allocating(text, &members[0][0], sizeof members[0], m);
        }
        if (m > 0) { /* one name per site when they match, else the first */
            snprintf(buf, n, "%s", members[count == m ? rank : 0]);
            return buf;
        }
        char own[256] = "";
        if (name_on_line(r->path[k], r->line[k], buf, n)) {
            if (!returned_later(r->path[k], r->line[k], buf)) return buf;
            snprintf(own, sizeof own, "%s", buf); /* a wrapper's own variable: last resort */
        }
        if (name_from_callers(a, r, k, frame, buf, n)) return buf;
        if (own[0]) {
            snprintf(buf, n, "%s", own);
            return buf;
        }
    }
    if (r || a->nframes == 0) return NULL; /* alloc@file.c:123 */
    /* no source line in the program: alloc@<library> */
    const module *m = module_of(a->frames[0]);
    if (!m) return NULL;
    const char *b = strrchr(m->path, '/');
    snprintf(buf, n, "alloc@%s", b ? b + 1 : m->path);
    return buf;
}

/* CLAMPI_LOCALITY_NAME(ptr, name) from <clampi/locality.h> lands here under the sampler
 * (the header's weak symbol is a no-op otherwise). */
CLAMPI_API void clampi_locality_name(const void *ptr, const char *name) {
    clampi_lalloc *a = ptr ? ls_alloc_find((uintptr_t)ptr) : NULL;
    if (a && name) snprintf(a->name, sizeof a->name, "%s", name);
}
