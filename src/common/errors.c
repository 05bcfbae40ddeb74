#include "common/errors.h"

#include <pthread.h>
#include <string.h>

static const struct {
    int mpi_class;
    const char *message;
} error_table[CLAMPI_NERRORS] = {
    [CLAMPI_E_WIN] = {MPI_ERR_WIN, "clampi: invalid window (null, freed, or not created by CMPI_Win_create/allocate)"},
    [CLAMPI_E_RANK] = {MPI_ERR_RANK, "clampi: target rank out of range for the window's group"},
    [CLAMPI_E_COUNT] = {MPI_ERR_COUNT, "clampi: negative count"},
    [CLAMPI_E_DISP] = {MPI_ERR_DISP, "clampi: negative target displacement"},
    [CLAMPI_E_RANGE] = {MPI_ERR_RMA_RANGE, "clampi: access past the end of the target's window"},
    [CLAMPI_E_TYPE] = {MPI_ERR_TYPE, "clampi: invalid datatype (null or not committed)"},
    [CLAMPI_E_TYPE_MISMATCH] = {MPI_ERR_TYPE, "clampi: origin and target data sizes differ"},
    [CLAMPI_E_INFO] = {MPI_ERR_INFO_VALUE, "clampi: invalid clampi info value or CLAMPI_* environment variable"},
    [CLAMPI_E_ARG] = {MPI_ERR_ARG, "clampi: invalid argument"},
    [CLAMPI_E_NOMEM] = {MPI_ERR_NO_MEM, "clampi: out of memory"},
    [CLAMPI_E_RMA_SYNC] = {MPI_ERR_RMA_SYNC, "clampi: RMA call outside a matching access/exposure epoch"},
    [CLAMPI_E_TYPE_LAYOUT] = {MPI_ERR_TYPE, "clampi: a UCX window cannot take this target datatype (an "
                                            "overlapping typemap, over 1 Mi pieces per element, a darray over "
                                            "16 MiB, an accumulate's of mixed basic types, a memory handle's "
                                            "not contiguous)"},
    [CLAMPI_E_OP] = {MPI_ERR_OP, "clampi: invalid or unsupported reduction operation"},
    [CLAMPI_E_LOCKTYPE] = {MPI_ERR_LOCKTYPE, "clampi: lock type must be MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE"},
    [CLAMPI_E_BASE] = {MPI_ERR_BASE, "clampi: memory not attached to this window, or cannot be registered"},
    [CLAMPI_E_UCX] = {MPI_ERR_OTHER, "clampi: a UCX operation failed"},
};

static int codes[CLAMPI_NERRORS];
static pthread_once_t registered = PTHREAD_ONCE_INIT;

/* Does MPI print message for code? MPICH 4.0.2 hands out codes of predefined classes
 * without its dynamic-code bit, and then prints one of its own unrelated messages for them
 * ("Missing ifname or invalid host/port description in business card" for a datatype
 * error; tests/mpi_bugs/mpich40_add_error_code_string.c): there the class itself is the
 * truer code. */
static int prints(int code, const char *message) {
    char got[MPI_MAX_ERROR_STRING];
    int len = 0;
    return MPI_Error_string(code, got, &len) == MPI_SUCCESS && strcmp(got, message) == 0;
}

static void register_codes(void) {
    for (int i = 0; i < CLAMPI_NERRORS; i++) {
        int code;
        if (MPI_Add_error_code(error_table[i].mpi_class, &code) == MPI_SUCCESS &&
            MPI_Add_error_string(code, (char *)error_table[i].message) == MPI_SUCCESS &&
            prints(code, error_table[i].message))
            codes[i] = code;
        else
            codes[i] = error_table[i].mpi_class; /* still the right class */
    }
}

int clampi_error_code(clampi_error e) {
    pthread_once(&registered, register_codes);
    return codes[e];
}

int clampi_errhandler_is_programs(MPI_Errhandler eh) {
    int own = eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
    own = own && eh != MPI_ERRORS_ABORT;
#endif
    return own;
}

/* How this MPI treats a handler of the program's making, which clampi's raises follow under
 * the preload (clampi_errors_as_mpi): what its calls return after the handler returned, the
 * error code (Open MPI, MPICH 4, Intel MPI 2021) or MPI_SUCCESS (MPICH 5); and which code a
 * multiple-completion call gives the handler, MPI_ERR_IN_STATUS (MPICH) or the failed
 * status's (Open MPI, as the standard says). The first is learned once, on a private
 * communicator whose handler only notes that it ran: an MPI_Iprobe with a negative tag (no
 * effect where MPI does not check it). The second is the library's name: a probe by a
 * completion call would reach the program's handler, as MPICH 4.0 raises those errors on
 * MPI_COMM_WORLD. */
static int as_mpi;
static pthread_once_t learned = PTHREAD_ONCE_INIT;
static int success_after_handler, handler_gets_status_code;
static volatile int noted_calls;

void clampi_errors_as_mpi(void) { as_mpi = 1; }
int clampi_errors_follow_mpi(void) { return as_mpi; }

static void note(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    noted_calls++;
}

static void learn(void) {
    int up = 0, down = 1;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    MPI_Comm self;
    if (!up || down || MPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS) return;
    MPI_Errhandler eh;
    if (MPI_Comm_create_errhandler(note, &eh) == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(self, eh);
        int flag = 0;
        int rc = MPI_Iprobe(0, -5, self, &flag, MPI_STATUS_IGNORE);
        success_after_handler = noted_calls == 1 && rc == MPI_SUCCESS;
        MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&eh);
    }
    MPI_Comm_free(&self);
    char name[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    handler_gets_status_code = MPI_Get_library_version(name, &len) == MPI_SUCCESS && strstr(name, "Open MPI");
}

/* The code a raise returns: as the MPI's own call would after the handler eh ran. */
static int returned(int code, int own) {
    if (!own || !as_mpi) return code;
    pthread_once(&learned, learn);
    return success_after_handler ? MPI_SUCCESS : code;
}

static int comm_handler_is_programs(MPI_Comm comm) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(comm, &eh);
    int own = clampi_errhandler_is_programs(eh);
    if (eh != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&eh);
    return own;
}

int clampi_raise_on_win(MPI_Win win, clampi_error e) { return clampi_raise_mpi_on_win(win, clampi_error_code(e)); }

int clampi_raise_mpi_on_win(MPI_Win win, int code) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Win_get_errhandler(win, &eh);
    int own = clampi_errhandler_is_programs(eh);
    if (eh != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&eh);
    MPI_Win_call_errhandler(win, code);
    return returned(code, own);
}

int clampi_raise_mpi(MPI_Comm comm, int code) {
    if (comm == MPI_COMM_NULL) comm = MPI_COMM_WORLD;
    int own = comm_handler_is_programs(comm);
    MPI_Comm_call_errhandler(comm, code);
    return returned(code, own);
}

int clampi_raise_in_status(MPI_Comm comm, int status_code) {
    if (comm == MPI_COMM_NULL) comm = MPI_COMM_WORLD;
    int own = comm_handler_is_programs(comm), handed = MPI_ERR_IN_STATUS;
    if (own && as_mpi) {
        pthread_once(&learned, learn);
        if (handler_gets_status_code) handed = status_code;
    }
    MPI_Comm_call_errhandler(comm, handed);
    return returned(MPI_ERR_IN_STATUS, own);
}

int clampi_raise_comm(MPI_Comm comm, clampi_error e) { return clampi_raise_mpi(comm, clampi_error_code(e)); }

int clampi_raise_nowin(clampi_error e) { return clampi_raise_comm(MPI_COMM_WORLD, e); }
