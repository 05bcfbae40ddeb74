/* MPI_Get's entry in assembly (x86-64, ELF): exactly the C version's test in preload.c,
 *   if (clampi_last.ops_win == win || !active) jump to PMPI_Get;
 *   else jump to clampi_pmpi_get_entry;
 * win is MPI_Get's 8th argument: on the stack at 16(%rsp) on entry. MPI_Win is a pointer
 * in Open MPI and an int in MPICH; other MPIs use the C version. */
#ifndef CLAMPI_PMPI_GET_X86_64_H
#define CLAMPI_PMPI_GET_X86_64_H
#include <stddef.h>

#include "pmpi/straight.h"

#if defined(__x86_64__) && defined(__ELF__) && (defined(OMPI_MAJOR_VERSION) || defined(MPICH_VERSION))
#define CLAMPI_ASM_MPI_GET 1
#ifdef OMPI_MAJOR_VERSION
#define CLAMPI_WIN_LOAD "movq 16(%rsp), %rax\n\tcmpq %rax, clampi_last(%rip)\n\t"
_Static_assert(sizeof(MPI_Win) == 8, "Open MPI: MPI_Win is a pointer");
#else
#define CLAMPI_WIN_LOAD "movl 16(%rsp), %eax\n\tcmpl %eax, clampi_last(%rip)\n\t"
_Static_assert(sizeof(MPI_Win) == 4, "MPICH: MPI_Win is an int");
#endif
_Static_assert(offsetof(clampi_straight_last, ops_win) == 0, "clampi_last.ops_win first (assembly below)");

int clampi_pmpi_get_entry(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                          MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win);

__asm__("\t.text\n"
        "\t.globl MPI_Get\n"
        "\t.type MPI_Get, @function\n"
        "\t.p2align 4\n"
        "MPI_Get:\n\t"
        CLAMPI_WIN_LOAD
        "jne 2f\n"
        "1:\tjmp *PMPI_Get@GOTPCREL(%rip)\n"
        "2:\tcmpl $0, active(%rip)\n\t"
        "je 1b\n\t"
        "jmp clampi_pmpi_get_entry\n"
        "\t.size MPI_Get, .-MPI_Get\n");
#endif
#endif
