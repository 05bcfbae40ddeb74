/* Datatype facts per message without MPI queries: the predefined types' size and
 * contiguity are looked up once (first use) and then found by handle; a derived type is
 * queried each time (its handle may be freed and reused by another type). */
#include <stdatomic.h>

#include "msg/msg.h"

#define NPRE 24
static MPI_Datatype pre_type[NPRE];
static int pre_size[NPRE];
static int npre;
static _Atomic int pre_ready;
static pthread_mutex_t pre_lock = PTHREAD_MUTEX_INITIALIZER;

static void query(MPI_Datatype type, clampi_tfacts *f) {
    MPI_Aint lb, extent, tlb, textent;
    int ni, na, nd, combiner;
    PMPI_Type_size(type, &f->size);
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &tlb, &textent);
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    f->contig = (textent == f->size && extent == f->size) || f->size == 0;
    f->tlb = tlb;
    f->predefined = combiner == MPI_COMBINER_NAMED;
}

/* The common contiguous predefined types (pair types such as MPI_DOUBLE_INT have gaps:
 * they take the query path). */
static void fill(void) {
    pthread_mutex_lock(&pre_lock);
    if (!atomic_load_explicit(&pre_ready, memory_order_acquire)) {
        const MPI_Datatype t[] = {
            MPI_BYTE,    MPI_CHAR,     MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT,     MPI_UNSIGNED_SHORT,
            MPI_INT,     MPI_UNSIGNED, MPI_LONG,        MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
            MPI_FLOAT,   MPI_DOUBLE,   MPI_PACKED,      MPI_INT8_T,        MPI_INT16_T,   MPI_INT32_T,
            MPI_INT64_T, MPI_UINT8_T,  MPI_UINT16_T,    MPI_UINT32_T,      MPI_UINT64_T,  MPI_C_BOOL};
        for (int i = 0; i < NPRE && i < (int)(sizeof t / sizeof t[0]); i++) {
            clampi_tfacts f;
            query(t[i], &f);
            if (!f.contig || f.tlb != 0) continue;
            pre_type[npre] = t[i];
            pre_size[npre] = f.size;
            npre++;
        }
        atomic_store_explicit(&pre_ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&pre_lock);
}

void clampi_msg_type_facts(MPI_Datatype type, clampi_tfacts *f) {
    if (!atomic_load_explicit(&pre_ready, memory_order_acquire)) fill();
    for (int i = 0; i < npre; i++)
        if (pre_type[i] == type) {
            f->size = pre_size[i];
            f->contig = 1;
            f->tlb = 0;
            f->predefined = 1;
            return;
        }
    query(type, f);
}
