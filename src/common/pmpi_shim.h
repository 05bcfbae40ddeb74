/* The PMPI shim: every MPI call clampi makes for itself goes to the PMPI_ entry point.
 *
 * Under the preload (libclampi_pmpi) the MPI_ names are clampi's own wrappers; a library
 * call to MPI_Allgather from the hierarchical collective would enter the wrapper again,
 * which builds the hierarchy again (a 68,000-frame stack overflow on simulated nodes).
 * This header is force-included (-include, src/CMakeLists.txt) into every library
 * object. Files that define MPI_ names themselves (the .c files of src/pmpi, src/msg/mpi_entry.c) are
 * compiled with CLAMPI_DEFINES_MPI_NAMES, which leaves the names alone: they spell PMPI_
 * out. scripts/check_pmpi.py (run by the test suite) fails on any library object that
 * still references an MPI_ function (a new call needs its line here) and on any call by an
 * MPI_ name in a file that defines MPI_ names. */
#ifndef CLAMPI_COMMON_PMPI_SHIM_H
#define CLAMPI_COMMON_PMPI_SHIM_H
#include <mpi.h>
#ifndef CLAMPI_DEFINES_MPI_NAMES

#define MPI_Abort PMPI_Abort
#define MPI_Accumulate PMPI_Accumulate
#define MPI_Add_error_class PMPI_Add_error_class
#define MPI_Add_error_code PMPI_Add_error_code
#define MPI_Add_error_string PMPI_Add_error_string
#define MPI_Allgather PMPI_Allgather
#define MPI_Allgatherv PMPI_Allgatherv
#define MPI_Alloc_mem PMPI_Alloc_mem
#define MPI_Allreduce PMPI_Allreduce
#define MPI_Alltoall PMPI_Alltoall
#define MPI_Alltoallv PMPI_Alltoallv
#define MPI_Barrier PMPI_Barrier
#define MPI_Bcast PMPI_Bcast
#define MPI_Comm_call_errhandler PMPI_Comm_call_errhandler
#define MPI_Comm_create_errhandler PMPI_Comm_create_errhandler
#define MPI_Comm_create_keyval PMPI_Comm_create_keyval
#define MPI_Comm_delete_attr PMPI_Comm_delete_attr
#define MPI_Comm_dup PMPI_Comm_dup
#define MPI_Comm_free PMPI_Comm_free
#define MPI_Comm_free_keyval PMPI_Comm_free_keyval
#define MPI_Comm_get_attr PMPI_Comm_get_attr
#define MPI_Comm_get_errhandler PMPI_Comm_get_errhandler
#define MPI_Comm_get_info PMPI_Comm_get_info
#define MPI_Comm_get_name PMPI_Comm_get_name
#define MPI_Comm_group PMPI_Comm_group
#define MPI_Comm_rank PMPI_Comm_rank
#define MPI_Comm_remote_size PMPI_Comm_remote_size
#define MPI_Comm_set_attr PMPI_Comm_set_attr
#define MPI_Comm_set_errhandler PMPI_Comm_set_errhandler
#define MPI_Comm_set_info PMPI_Comm_set_info
#define MPI_Comm_size PMPI_Comm_size
#define MPI_Comm_split PMPI_Comm_split
#define MPI_Comm_split_type PMPI_Comm_split_type
#define MPI_Comm_test_inter PMPI_Comm_test_inter
#define MPI_Compare_and_swap PMPI_Compare_and_swap
#define MPI_Errhandler_free PMPI_Errhandler_free
#define MPI_Error_class PMPI_Error_class
#define MPI_Error_string PMPI_Error_string
#define MPI_Fetch_and_op PMPI_Fetch_and_op
#define MPI_Finalize PMPI_Finalize
#define MPI_Finalized PMPI_Finalized
#define MPI_Free_mem PMPI_Free_mem
#define MPI_Gather PMPI_Gather
#define MPI_Get PMPI_Get
#define MPI_Get_accumulate PMPI_Get_accumulate
#define MPI_Get_address PMPI_Get_address
#define MPI_Get_count PMPI_Get_count
#define MPI_Get_processor_name PMPI_Get_processor_name
#define MPI_Get_elements PMPI_Get_elements
#define MPI_Get_elements_x PMPI_Get_elements_x
#define MPI_Get_library_version PMPI_Get_library_version
#define MPI_Grequest_complete PMPI_Grequest_complete
#define MPI_Grequest_start PMPI_Grequest_start
#define MPI_Group_free PMPI_Group_free
#define MPI_Group_incl PMPI_Group_incl
#define MPI_Group_rank PMPI_Group_rank
#define MPI_Group_size PMPI_Group_size
#define MPI_Group_translate_ranks PMPI_Group_translate_ranks
#define MPI_Ibarrier PMPI_Ibarrier
#define MPI_Info_create PMPI_Info_create
#define MPI_Info_delete PMPI_Info_delete
#define MPI_Info_dup PMPI_Info_dup
#define MPI_Info_free PMPI_Info_free
#define MPI_Info_get PMPI_Info_get
#define MPI_Info_get_nkeys PMPI_Info_get_nkeys
#define MPI_Info_get_nthkey PMPI_Info_get_nthkey
#define MPI_Info_get_valuelen PMPI_Info_get_valuelen
#define MPI_Info_set PMPI_Info_set
#define MPI_Init PMPI_Init
#define MPI_Init_thread PMPI_Init_thread
#define MPI_Initialized PMPI_Initialized
#define MPI_Iprobe PMPI_Iprobe
#define MPI_Irecv PMPI_Irecv
#define MPI_Isend PMPI_Isend
#define MPI_Pack PMPI_Pack
#define MPI_Pack_size PMPI_Pack_size
#define MPI_Probe PMPI_Probe
#define MPI_Put PMPI_Put
#define MPI_Query_thread PMPI_Query_thread
#define MPI_Raccumulate PMPI_Raccumulate
#define MPI_Recv PMPI_Recv
#define MPI_Reduce PMPI_Reduce
#define MPI_Reduce_local PMPI_Reduce_local
#define MPI_Request_free PMPI_Request_free
#define MPI_Request_get_status PMPI_Request_get_status
#define MPI_Rget PMPI_Rget
#define MPI_Rget_accumulate PMPI_Rget_accumulate
#define MPI_Rput PMPI_Rput
#define MPI_Send PMPI_Send
#define MPI_Sendrecv PMPI_Sendrecv
#define MPI_Status_set_cancelled PMPI_Status_set_cancelled
#define MPI_Status_set_elements PMPI_Status_set_elements
#define MPI_Status_set_elements_x PMPI_Status_set_elements_x
#define MPI_Test PMPI_Test
#define MPI_Test_cancelled PMPI_Test_cancelled
#define MPI_Testall PMPI_Testall
#define MPI_Testany PMPI_Testany
#define MPI_Testsome PMPI_Testsome
#define MPI_Type_commit PMPI_Type_commit
#define MPI_Type_contiguous PMPI_Type_contiguous
#define MPI_Type_create_keyval PMPI_Type_create_keyval
#define MPI_Type_create_resized PMPI_Type_create_resized
#define MPI_Type_dup PMPI_Type_dup
#define MPI_Type_free PMPI_Type_free
#define MPI_Type_free_keyval PMPI_Type_free_keyval
#define MPI_Type_get_attr PMPI_Type_get_attr
#define MPI_Type_get_contents PMPI_Type_get_contents
#define MPI_Type_get_envelope PMPI_Type_get_envelope
#define MPI_Type_get_extent PMPI_Type_get_extent
#define MPI_Type_get_name PMPI_Type_get_name
#define MPI_Type_get_true_extent PMPI_Type_get_true_extent
#define MPI_Type_set_attr PMPI_Type_set_attr
#define MPI_Type_size PMPI_Type_size
#define MPI_Type_size_x PMPI_Type_size_x
#define MPI_Type_vector PMPI_Type_vector
#define MPI_Unpack PMPI_Unpack
#define MPI_Wait PMPI_Wait
#define MPI_Waitall PMPI_Waitall
#define MPI_Waitany PMPI_Waitany
#define MPI_Waitsome PMPI_Waitsome
#define MPI_Win_allocate PMPI_Win_allocate
#define MPI_Win_allocate_shared PMPI_Win_allocate_shared
#define MPI_Win_attach PMPI_Win_attach
#define MPI_Win_call_errhandler PMPI_Win_call_errhandler
#define MPI_Win_complete PMPI_Win_complete
#define MPI_Win_create PMPI_Win_create
#define MPI_Win_create_dynamic PMPI_Win_create_dynamic
#define MPI_Win_create_keyval PMPI_Win_create_keyval
#define MPI_Win_detach PMPI_Win_detach
#define MPI_Win_fence PMPI_Win_fence
#define MPI_Win_flush PMPI_Win_flush
#define MPI_Win_flush_all PMPI_Win_flush_all
#define MPI_Win_flush_local PMPI_Win_flush_local
#define MPI_Win_flush_local_all PMPI_Win_flush_local_all
#define MPI_Win_free PMPI_Win_free
#define MPI_Win_free_keyval PMPI_Win_free_keyval
#define MPI_Win_get_attr PMPI_Win_get_attr
#define MPI_Win_get_errhandler PMPI_Win_get_errhandler
#define MPI_Win_get_group PMPI_Win_get_group
#define MPI_Win_get_info PMPI_Win_get_info
#define MPI_Win_get_name PMPI_Win_get_name
#define MPI_Win_lock PMPI_Win_lock
#define MPI_Win_lock_all PMPI_Win_lock_all
#define MPI_Win_post PMPI_Win_post
#define MPI_Win_set_attr PMPI_Win_set_attr
#define MPI_Win_set_errhandler PMPI_Win_set_errhandler
#define MPI_Win_set_info PMPI_Win_set_info
#define MPI_Win_set_name PMPI_Win_set_name
#define MPI_Win_shared_query PMPI_Win_shared_query
#define MPI_Win_start PMPI_Win_start
#define MPI_Win_sync PMPI_Win_sync
#define MPI_Win_test PMPI_Win_test
#define MPI_Win_unlock PMPI_Win_unlock
#define MPI_Win_unlock_all PMPI_Win_unlock_all
#define MPI_Win_wait PMPI_Win_wait
#define MPI_Wtime PMPI_Wtime

/* MPI-4 large-count variants, where the MPI has them (MPICH 4) */
#if MPI_VERSION >= 4
#define MPI_Accumulate_c PMPI_Accumulate_c
#define MPI_Get_c PMPI_Get_c
#define MPI_Get_accumulate_c PMPI_Get_accumulate_c
#define MPI_Put_c PMPI_Put_c
#define MPI_Raccumulate_c PMPI_Raccumulate_c
#define MPI_Rget_c PMPI_Rget_c
#define MPI_Rget_accumulate_c PMPI_Rget_accumulate_c
#define MPI_Rput_c PMPI_Rput_c
#define MPI_Win_allocate_c PMPI_Win_allocate_c
#define MPI_Win_allocate_shared_c PMPI_Win_allocate_shared_c
#define MPI_Win_create_c PMPI_Win_create_c
#define MPI_Win_shared_query_c PMPI_Win_shared_query_c
#endif
#endif /* CLAMPI_DEFINES_MPI_NAMES */
#endif
