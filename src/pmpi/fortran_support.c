/* The Fortran side of the preload: sentinels, statuses and strings for the generated
 * entry points (fortran_entry.c, from entry_points.tsv), and MPI_INIT / MPI_INIT_THREAD,
 * which run the MPI's own Fortran initialisation (it sets up the Fortran sentinels) and
 * then clampi's. */
#define _GNU_SOURCE
#include "pmpi/fortran_support.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "pmpi/preload_internal.h"

void (*clampi_f_next(const char *name, void (*self)(void)))(void) {
    void *p = dlsym(RTLD_NEXT, name);
    if (!p || p == (void *)self) return NULL;
    return (void (*)(void))p;
}

/* ---- sentinels: Open MPI's common blocks (one set for every binding); MPICH's and Intel
 * MPI's variables holding their addresses (set by the MPI's Fortran MPI_INIT) and mpi_f08
 * objects. Looked up once: the names' addresses do not move. */
static struct {
    int done;
    void *in_place, *bottom, *status_ignore, *statuses_ignore; /* Open MPI */
    void **mpich_in_place, **mpich_bottom;                     /* MPICH, Intel MPI */
    void *f08_in_place, *f08_bottom;                           /* MPICH mpi_f08 */
} sentinel;

static void *ompi_common(const char *base) {
    char name[64];
    const char *forms[] = {"%s_", "%s", "%s__"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        snprintf(name, sizeof name, forms[i], base);
        void *p = dlsym(RTLD_DEFAULT, name);
        if (p) return p;
    }
    return NULL;
}

static void sentinels_find(void) {
    if (__atomic_load_n(&sentinel.done, __ATOMIC_ACQUIRE)) return;
    sentinel.in_place = ompi_common("mpi_fortran_in_place");
    sentinel.bottom = ompi_common("mpi_fortran_bottom");
    sentinel.status_ignore = ompi_common("mpi_fortran_status_ignore");
    sentinel.statuses_ignore = ompi_common("mpi_fortran_statuses_ignore");
    sentinel.mpich_in_place = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_IN_PLACE");
    sentinel.mpich_bottom = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_BOTTOM");
    sentinel.f08_in_place = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_IN_PLACE");
    sentinel.f08_bottom = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_BOTTOM");
    __atomic_store_n(&sentinel.done, 1, __ATOMIC_RELEASE);
}

static int is(const void *buf, const void *ompi, void *const *mpich) {
    return buf && ((ompi && buf == ompi) || (mpich && buf == *mpich));
}

void *clampi_f_buf(void *buf) {
    sentinels_find();
    if (is(buf, sentinel.in_place, sentinel.mpich_in_place)) return MPI_IN_PLACE;
    if (is(buf, sentinel.bottom, sentinel.mpich_bottom)) return MPI_BOTTOM;
    return buf;
}

void *clampi_f08_buf(void *buf) {
    sentinels_find();
    if (buf && buf == sentinel.f08_in_place) return MPI_IN_PLACE;
    if (buf && buf == sentinel.f08_bottom) return MPI_BOTTOM;
    return clampi_f_buf(buf);
}

/* ---- statuses: INTEGER arrays of MPI_STATUS_SIZE (= sizeof(MPI_Status) / sizeof(int) in
 * the MPIs clampi builds with). */
enum { F_STATUS_SIZE = sizeof(MPI_Status) / sizeof(MPI_Fint) };

int clampi_f_status_ignored(const MPI_Fint *status) {
    sentinels_find();
    return status == MPI_F_STATUS_IGNORE || (sentinel.status_ignore && status == sentinel.status_ignore);
}
int clampi_f_statuses_ignored(const MPI_Fint *statuses) {
    sentinels_find();
    return statuses == MPI_F_STATUSES_IGNORE || (sentinel.statuses_ignore && statuses == sentinel.statuses_ignore);
}
void clampi_f_status_out(const MPI_Status *c, MPI_Fint *f) { PMPI_Status_c2f(c, f); }
void clampi_f_status_in(const MPI_Fint *f, MPI_Status *c) { PMPI_Status_f2c(f, c); }
MPI_Fint *clampi_f_status_at(MPI_Fint *statuses, int k) { return statuses + (size_t)k * F_STATUS_SIZE; }

/* TYPE(MPI_Status) of mpi_f08: Open MPI lays it out as the INTEGER array (and keeps
 * one MPI_STATUS_IGNORE for both); MPICH as MPI_F08_status. */
#if defined(OMPI_MAJOR_VERSION)
int clampi_f08_status_ignored(const MPI_Fint *status) { return clampi_f_status_ignored(status); }
int clampi_f08_statuses_ignored(const MPI_Fint *statuses) { return clampi_f_statuses_ignored(statuses); }
void clampi_f08_status_out(const MPI_Status *c, MPI_Fint *f) { clampi_f_status_out(c, f); }
void clampi_f08_status_in(const MPI_Fint *f, MPI_Status *c) { clampi_f_status_in(f, c); }
MPI_Fint *clampi_f08_status_at(MPI_Fint *statuses, int k) { return clampi_f_status_at(statuses, k); }
#else
int clampi_f08_status_ignored(const MPI_Fint *status) {
    return (const void *)status == (const void *)MPI_F08_STATUS_IGNORE;
}
int clampi_f08_statuses_ignored(const MPI_Fint *statuses) {
    return (const void *)statuses == (const void *)MPI_F08_STATUSES_IGNORE;
}
/* MPICH lays MPI_F08_status out as its MPI_Status (and keeps MPI_Status_c2f08 in its
 * Fortran library, which a C program does not load). */
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH: MPI_F08_status is MPI_Status");
void clampi_f08_status_out(const MPI_Status *c, MPI_Fint *f) { memcpy(f, c, sizeof *c); }
void clampi_f08_status_in(const MPI_Fint *f, MPI_Status *c) { memcpy(c, f, sizeof *c); }
MPI_Fint *clampi_f08_status_at(MPI_Fint *statuses, int k) { return (MPI_Fint *)((MPI_F08_status *)statuses + k); }
#endif

void clampi_f_string(char *dst, size_t cap, const char *src, size_t len) {
    while (len > 0 && src[len - 1] == ' ') len--;
    if (len >= cap) len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* ---- MPI_INIT, MPI_INIT_THREAD: the MPI's own Fortran entry, then clampi's set-up. */
typedef void (*f_init_fn)(MPI_Fint *ierr);
typedef void (*f_init_thread_fn)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);

void (*clampi_f_next_of(const char *const names[], size_t n, void (*self)(void)))(void) {
    for (size_t i = 0; i < n; i++) {
        void (*p)(void) = clampi_f_next(names[i], self);
        if (p) return p;
    }
    return NULL;
}

void (*clampi_f_next_cached(void (**slot)(void), const char *const names[], size_t n, void (*self)(void)))(void) {
    void (*p)(void) = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p && (p = clampi_f_next_of(names, n, self))) __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

static void f_init(MPI_Fint *ierr) {
    static const char *const names[] = {"pmpi_init_", "pmpi_init__", "pmpi_init", "PMPI_INIT"};
    f_init_fn real = (f_init_fn)clampi_f_next_of(names, 4, (void (*)(void))f_init);
    if (!real) {
        *ierr = MPI_ERR_INTERN;
        return;
    }
    real(ierr);
    if (*ierr == MPI_SUCCESS) clampi_pmpi_after_init();
}

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    static const char *const names[] = {"pmpi_init_thread_", "pmpi_init_thread__", "pmpi_init_thread",
                                        "PMPI_INIT_THREAD"};
    f_init_thread_fn real = (f_init_thread_fn)clampi_f_next_of(names, 4, (void (*)(void))f_init_thread);
    if (!real) {
        *ierr = MPI_ERR_INTERN;
        return;
    }
    real(required, provided, ierr);
    if (*ierr == MPI_SUCCESS) clampi_pmpi_after_init();
}

static void f08_init(MPI_Fint *ierr) {
    MPI_Fint rc;
    f_init(&rc);
    if (ierr) *ierr = rc;
}

static void f08_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    MPI_Fint rc;
    f_init_thread(required, provided, &rc);
    if (ierr) *ierr = rc;
}

CLAMPI_F_ALIAS(mpi_init_, f_init)
CLAMPI_F_ALIAS(mpi_init__, f_init)
CLAMPI_F_ALIAS(mpi_init, f_init)
CLAMPI_F_ALIAS(MPI_INIT, f_init)
CLAMPI_F_ALIAS(mpi_init_thread_, f_init_thread)
CLAMPI_F_ALIAS(mpi_init_thread__, f_init_thread)
CLAMPI_F_ALIAS(mpi_init_thread, f_init_thread)
CLAMPI_F_ALIAS(MPI_INIT_THREAD, f_init_thread)
CLAMPI_F_ALIAS(mpi_init_f08_, f08_init)
CLAMPI_F_ALIAS(mpi_init_thread_f08_, f08_init_thread)

/* ---- MPI_WIN_GET_ATTR: the MPIs' Fortran entries read attributes inside the MPI, not
 * through the C MPI_Win_get_attr, so the window's flavor is corrected here as there: the
 * MPI's own entry, then MPI_WIN_FLAVOR_ALLOCATE for a window the program allocated and the
 * preload made with MPI_Win_create (CLAMPI_BACKEND=ucx). Other MPIs (the standard ABI,
 * whose Fortran is the MPI's own): the MPI's answer as it is. */
#if defined(OPEN_MPI)
#define F_WIN_CREATE_FLAVOR MPI_WIN_CREATE_FLAVOR
#elif defined(MPICH_VERSION) /* MPICH, Intel MPI: a predefined key's Fortran value is the C one + 1 */
#define F_WIN_CREATE_FLAVOR (MPI_WIN_CREATE_FLAVOR + 1)
#endif

typedef void (*f_win_get_attr_fn)(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr);

static void win_get_attr_with(f_win_get_attr_fn real, MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
                              MPI_Fint *ierr) {
    MPI_Fint rc = MPI_ERR_INTERN;
    if (real) real(win, keyval, value, flag, &rc);
#ifdef F_WIN_CREATE_FLAVOR
    if (rc == MPI_SUCCESS && *keyval == F_WIN_CREATE_FLAVOR && (*flag & 1) &&
        clampi_pmpi_flavor_asked(PMPI_Win_f2c(*win)) == MPI_WIN_FLAVOR_ALLOCATE)
        *value = MPI_WIN_FLAVOR_ALLOCATE;
#endif
    if (ierr) *ierr = rc;
}

static void f_win_get_attr(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr) {
    static const char *const names[] = {"pmpi_win_get_attr_", "pmpi_win_get_attr__", "pmpi_win_get_attr",
                                        "PMPI_WIN_GET_ATTR"};
    static void (*next)(void);
    win_get_attr_with((f_win_get_attr_fn)clampi_f_next_cached(&next, names, 4, (void (*)(void))f_win_get_attr), win,
                      keyval, value, flag, ierr);
}

static void f08_win_get_attr(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr) {
    static const char *const names[] = {"pmpi_win_get_attr_f08_", "pmpi_win_get_attr_f08", "mpi_win_get_attr_f08_"};
    static void (*next)(void);
    win_get_attr_with((f_win_get_attr_fn)clampi_f_next_cached(&next, names, 3, (void (*)(void))f08_win_get_attr), win,
                      keyval, value, flag, ierr);
}

CLAMPI_F_ALIAS(mpi_win_get_attr_, f_win_get_attr)
CLAMPI_F_ALIAS(mpi_win_get_attr__, f_win_get_attr)
CLAMPI_F_ALIAS(mpi_win_get_attr, f_win_get_attr)
CLAMPI_F_ALIAS(MPI_WIN_GET_ATTR, f_win_get_attr)
CLAMPI_F_ALIAS(mpi_win_get_attr_f08_, f08_win_get_attr)
