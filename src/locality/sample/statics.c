/* Static data of the executable: STREAM as published keeps its arrays
 * in .bss, which no malloc or mmap wrapper sees. At start-up every data object of the
 * executable (.symtab: STT_OBJECT in a writable allocated section, .data or .bss) of at
 * least CLAMPI_LOCALITY_MIN_SIZE bytes becomes a tracked structure of kind "static",
 * named by its symbol (C++ names demangled when the program has libstdc++): its whole
 * pages are protected like a fresh mmap's. Pages an object shares with its neighbours
 * (at most one at each end) are not tracked; neither are shared libraries' static data.
 * A stripped executable: the interiors of .data and .bss as "[.data]" / "[.bss]". */
#define _GNU_SOURCE
#include "locality/sample/sample.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uintptr_t exe_bias;
static int first_object(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    (void)arg;
    exe_bias = info->dlpi_addr; /* the first object is the executable */
    return 1;
}

static void *read_at(int fd, off_t off, size_t n) {
    void *p = malloc(n ? n : 1);
    if (p && pread(fd, p, n, off) != (ssize_t)n) {
        free(p);
        return NULL;
    }
    return p;
}

static void track_static(uintptr_t lo, size_t size, const char *name) {
    uintptr_t first = (lo + ls.sys_page - 1) & ~(ls.sys_page - 1), end = (lo + size) & ~(ls.sys_page - 1);
    if (end <= first || size < ls.min_size) return;
    clampi_lalloc a;
    memset(&a, 0, sizeof a);
    a.start = lo;
    a.size = size;
    a.map_start = first;
    a.map_size = end - first;
    a.thread = -1; /* the contract's alloc.thread for static data */
    a.prot = PROT_READ | PROT_WRITE;
    a.kind = CLAMPI_LA_STATIC;
    snprintf(a.name, sizeof a.name, "%s", name);
    pthread_mutex_lock(&ls.alloc_lock);
    uint32_t i = ls_alloc_add(&a, 0);
    pthread_mutex_unlock(&ls.alloc_lock);
    if (i != UINT32_MAX && mprotect((void *)first, end - first, PROT_NONE) == 0)
        atomic_fetch_add(&ls.static_objects, 1);
}

void ls_statics_init(void) {
    ls_in_lib++;
    dl_iterate_phdr(first_object, NULL);
    char *(*demangle)(const char *, char *, size_t *, int *) =
        (char *(*)(const char *, char *, size_t *, int *))dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    if (fd < 0 || pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        !(sh = read_at(fd, (off_t)eh.e_shoff, (size_t)eh.e_shnum * sizeof *sh)))
        goto out;
    int symtab = -1;
    for (int i = 0; i < eh.e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB) symtab = i;
    if (symtab < 0 || sh[symtab].sh_link >= eh.e_shnum) { /* stripped */
        char *names = eh.e_shstrndx < eh.e_shnum
                          ? read_at(fd, (off_t)sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size)
                          : NULL;
        for (int i = 0; names && i < eh.e_shnum; i++) {
            const char *n = sh[i].sh_name < sh[eh.e_shstrndx].sh_size ? names + sh[i].sh_name : "";
            if ((sh[i].sh_flags & (SHF_ALLOC | SHF_WRITE)) == (SHF_ALLOC | SHF_WRITE) &&
                (strcmp(n, ".data") == 0 || strcmp(n, ".bss") == 0)) {
                char label[16];
                snprintf(label, sizeof label, "[%s]", n);
                track_static(exe_bias + sh[i].sh_addr, sh[i].sh_size, label);
            }
        }
        free(names);
        goto out;
    }
    Elf64_Sym *syms = read_at(fd, (off_t)sh[symtab].sh_offset, sh[symtab].sh_size);
    const Elf64_Shdr *strs = &sh[sh[symtab].sh_link];
    char *str = read_at(fd, (off_t)strs->sh_offset, strs->sh_size);
    size_t nsym = sh[symtab].sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; syms && str && i < nsym; i++) {
        const Elf64_Sym *s = &syms[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_OBJECT || s->st_size < ls.min_size || s->st_shndx == SHN_UNDEF ||
            s->st_shndx >= eh.e_shnum || s->st_name >= strs->sh_size)
            continue;
        const Elf64_Shdr *sec = &sh[s->st_shndx];
        if ((sec->sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE) || (sec->sh_flags & SHF_TLS)) continue;
        const char *name = str + s->st_name;
        char *dm = NULL;
        int st = -1;
        if (demangle && name[0] == '_' && name[1] == 'Z') dm = demangle(name, NULL, NULL, &st);
        track_static(exe_bias + s->st_value, s->st_size, dm && st == 0 ? dm : name);
        free(dm);
    }
    free(syms);
    free(str);
out:
    free(sh);
    if (fd >= 0) close(fd);
    ls_in_lib--;
}
