/* CLAMPI_MATCH under the preload: MPI's point-to-point calls on communicators carried by
 * clampi's matching engine (src/msg). One concern per file:
 *   match_comm.c     which communicators are clampi's (MPI_COMM_WORLD after MPI_Init, the
 *                    communicators derived from an enabled one, the clampi_match info key),
 *                    MPI_Comm_get_info, MPI_Comm_free, the stats lines at MPI_Finalize
 *   match_entry.c    MPI_Send ... MPI_Mrecv, the buffered sends (src/msg/bsend.c): a clampi
 *                    communicator's go to its carrier's table, another's to MPI (the
 *                    completion calls are src/msg/mpi_entry.c)
 *   match_persist.c  MPI_Send_init ... MPI_Start/Startall: the message layer's persistent
 *                    requests (src/msg/persist.c) where clampi serves the operation
 *   match_progress.c the MPI carrier inside blocking collectives (nonblocking when small)
 *   entry_points.tsv  (its hand-over rows, generated) the MPI carrier before blocking calls
 *                    with no nonblocking form (communicator creation, collective file I/O,
 *                    MPI-4 large-count collectives): clampi's queued receives go to MPI first */
#ifndef CLAMPI_PMPI_MATCH_ENTRY_H
#define CLAMPI_PMPI_MATCH_ENTRY_H
#include <mpi.h>

#include <limits.h>

#include "msg/carrier_ops.h"
#include "pmpi/ulfm.h"

/* match_entry.c: Fortran handles of MPI_Message, clampi's own (from matched probes) included */
#ifndef MPI_ABI /* the MPI-5 ABI build has no Fortran side (docs/platforms.md) */
MPI_Message clampi_pm_message_f2c(MPI_Fint f);
MPI_Fint clampi_pm_message_c2f(MPI_Message m);
#endif

/* match_comm.c */
void clampi_pm_after_init(void);            /* enables MPI_COMM_WORLD when CLAMPI_MATCH is set */
void clampi_pm_finalize(void);              /* stats lines (CLAMPI_STATS), outstanding buffered sends */
void clampi_pm_comm_forget(MPI_Comm *comm); /* before MPI_Comm_free / _disconnect of any communicator */
/* The clampi communicator behind comm, or NULL (MPI's, none enabled at all, or revoked by
 * the program: ulfm.c, whose calls MPI then answers with MPIX_ERR_REVOKED). */
extern _Atomic int clampi_pm_enabled; /* communicators enabled now */
/* No communicator of the preload's enabled now: every call is MPI's (see clampi_pm_idle). */
static inline int clampi_pm_none(void) { return !atomic_load_explicit(&clampi_pm_enabled, memory_order_relaxed); }
static inline clampi_mcomm *clampi_pm_comm_any(MPI_Comm comm) { /* revoked ones too */
    if (!atomic_load_explicit(&clampi_pm_enabled, memory_order_relaxed) || comm == MPI_COMM_NULL) return NULL;
    return clampi_msg_comm(comm);
}
static inline clampi_mcomm *clampi_pm_comm(MPI_Comm comm) {
    clampi_mcomm *mc = clampi_pm_comm_any(comm);
    return mc && !atomic_load_explicit(&mc->revoked, memory_order_relaxed) ? mc : NULL;
}
/* clampi's communicator behind comm when this thread's last lookup says so at once (no call
 * inside: an entry point that tests it first reaches the carrier as a tail call); NULL
 * otherwise (MPI's communicator, or ask clampi_pm_comm). */
static inline clampi_mcomm *clampi_pm_comm_hot(MPI_Comm comm) {
    clampi_mcomm *mc;
    if (!atomic_load_explicit(&clampi_pm_enabled, memory_order_relaxed) || !clampi_msg_comm_cached(comm, &mc))
        return NULL;
    return mc && !atomic_load_explicit(&mc->revoked, memory_order_relaxed) ? mc : NULL;
}

/* The generated hand-over entry points (entry_points.tsv): MPI's blocking call after
 * clampi's queued receives went to MPI (the MPI carrier) */
#define HANDED(call)              \
    do {                          \
        clampi_carrier_release(); \
        return call;              \
    } while (0)

/* The int-count point-to-point entry points under hidden names: the same code, called by
 * the large-count forms (generated from entry_points.tsv) without going through the
 * exported MPI_ symbols, which a tool loaded before clampi may wrap. Each is defined
 * beside its MPI_ function (CLAMPI_PM_INT_ENTRY). */
#define CLAMPI_PM_INT_ENTRY(name) \
    extern __typeof__(MPI_##name) clampi_pm_##name __attribute__((alias("MPI_" #name), visibility("hidden")))
#define CLAMPI_PM_INT_DECL(name) extern __typeof__(MPI_##name) clampi_pm_##name __attribute__((visibility("hidden")))
CLAMPI_PM_INT_DECL(Send);
CLAMPI_PM_INT_DECL(Bsend);
CLAMPI_PM_INT_DECL(Rsend);
CLAMPI_PM_INT_DECL(Ssend);
CLAMPI_PM_INT_DECL(Isend);
CLAMPI_PM_INT_DECL(Ibsend);
CLAMPI_PM_INT_DECL(Irsend);
CLAMPI_PM_INT_DECL(Issend);
CLAMPI_PM_INT_DECL(Recv);
CLAMPI_PM_INT_DECL(Irecv);
CLAMPI_PM_INT_DECL(Send_init);
CLAMPI_PM_INT_DECL(Bsend_init);
CLAMPI_PM_INT_DECL(Rsend_init);
CLAMPI_PM_INT_DECL(Ssend_init);
CLAMPI_PM_INT_DECL(Recv_init);
CLAMPI_PM_INT_DECL(Sendrecv);
CLAMPI_PM_INT_DECL(Sendrecv_replace);
CLAMPI_PM_INT_DECL(Mrecv);
CLAMPI_PM_INT_DECL(Imrecv);
#ifdef CLAMPI_MPI_HAS_ISENDRECV
CLAMPI_PM_INT_DECL(Isendrecv);
CLAMPI_PM_INT_DECL(Isendrecv_replace);
#endif

#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
/* A large-count call's (count, datatype) for the int call: as they are when count fits in
 * an int (a negative one too: the int call reports it), else one element of a type *made of
 * count elements, which the caller frees after the call (clampi and MPI keep their own
 * reference to a type a pending operation uses). 0: no such type (bad input, which MPI's
 * own large-count call then reports on the right communicator). */
int clampi_pm_narrow_big(MPI_Count count, MPI_Datatype type, MPI_Datatype *made); /* match_entry.c */
static inline int clampi_pm_narrow(MPI_Count count, MPI_Datatype type, int *n, MPI_Datatype *t, MPI_Datatype *made) {
    if (count >= INT_MIN && count <= INT_MAX) {
        *n = (int)count, *t = type;
        return 1;
    }
    if (!clampi_pm_narrow_big(count, type, made)) return 0;
    *n = 1, *t = *made;
    return 1;
}
static inline void clampi_pm_unmade(MPI_Datatype *made) {
    if (*made != MPI_DATATYPE_NULL) PMPI_Type_free(made);
}
#endif

/* match_progress.c: MPI's MPI_Alltoall / MPI_Allgather, nonblocking in a carrier job */
int clampi_pm_alltoall_unblocked(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm);
int clampi_pm_allgather_unblocked(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                  MPI_Datatype rtype, MPI_Comm comm);
#endif
