/* PASS_ENTRY (see preload.c): the fast test in front of an RMA operation's entry point.
 *   if (clampi_last.ops_win == win || !active) jump to PMPI_NAME;
 *   else jump to clampi_pmpi_NAME_entry (same arguments);
 * On x86-64 (ELF) in assembly: win, a stack argument, is at WIN_OFFSET(%rsp) on entry.
 * MPI_Win is a pointer in Open MPI and an int in MPICH; other MPIs and architectures
 * use the C version. Include only from preload.c (it uses `active` and `clampi_last`). */
#ifndef CLAMPI_PMPI_PASS_ENTRY_H
#define CLAMPI_PMPI_PASS_ENTRY_H
#include <stddef.h>

#include "pmpi/straight.h"

#if defined(__x86_64__) && defined(__ELF__) && (defined(OMPI_MAJOR_VERSION) || defined(MPICH_VERSION)) && \
    !defined(CLAMPI_NO_ASM_ENTRY)
#ifdef OMPI_MAJOR_VERSION
#define CLAMPI_WIN_CMP(off) "movq " #off "(%rsp), %rax\n\tcmpq %rax, clampi_last(%rip)\n\t"
_Static_assert(sizeof(MPI_Win) == 8, "Open MPI: MPI_Win is a pointer");
#else
#define CLAMPI_WIN_CMP(off) "movl " #off "(%rsp), %eax\n\tcmpl %eax, clampi_last(%rip)\n\t"
_Static_assert(sizeof(MPI_Win) == 4, "MPICH: MPI_Win is an int");
#endif
_Static_assert(offsetof(clampi_straight_last, ops_win) == 0, "clampi_last.ops_win first (assembly below)");

#define PASS_ENTRY(NAME, WIN_OFFSET, PARAMS, ARGS)                                                     \
    int clampi_pmpi_##NAME##_entry PARAMS;                                                             \
    __asm__("\t.text\n"                                                                                \
            "\t.globl MPI_" #NAME "\n"                                                                 \
            "\t.type MPI_" #NAME ", @function\n"                                                       \
            "\t.p2align 4\n"                                                                           \
            "MPI_" #NAME ":\n\t" CLAMPI_WIN_CMP(WIN_OFFSET) "jne 2f\n"                                 \
                                                            "1:\tjmp *PMPI_" #NAME "@GOTPCREL(%rip)\n" \
                                                            "2:\tcmpl $0, active(%rip)\n\t"            \
                                                            "je 1b\n\t"                                \
                                                            "jmp clampi_pmpi_" #NAME "_entry\n"        \
                                                            "\t.size MPI_" #NAME ", .-MPI_" #NAME "\n");
#else
#define PASS_ENTRY(NAME, WIN_OFFSET, PARAMS, ARGS)   \
    int clampi_pmpi_##NAME##_entry PARAMS;           \
    CLAMPI_API int MPI_##NAME PARAMS {               \
        if (FAST_PASS(ops)) return PMPI_##NAME ARGS; \
        return clampi_pmpi_##NAME##_entry ARGS;      \
    }
#endif
#endif
