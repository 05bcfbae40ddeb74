# Find MPI the standard way (pick one with -DMPI_C_COMPILER=/path/to/mpicc) and the
# launcher that belongs to it: the one beside that mpicc. Debian installs several MPIs side
# by side with suffixed names (mpicc.mpich / mpiexec.mpich); a venv or module has plain
# names in its own bin/. FindMPI alone would pick whichever mpiexec comes first on PATH.
# FORCE: a configure run before that MPI was installed leaves MPIEXEC_EXECUTABLE-NOTFOUND
# in the cache, which a plain set(CACHE) would keep.
if(MPI_C_COMPILER AND NOT MPIEXEC_EXECUTABLE)
  get_filename_component(_clampi_cc_name "${MPI_C_COMPILER}" NAME)
  get_filename_component(_clampi_cc_dir "${MPI_C_COMPILER}" DIRECTORY)
  if(NOT _clampi_cc_dir)
    find_program(_clampi_cc_path "${MPI_C_COMPILER}" NO_CACHE)
    get_filename_component(_clampi_cc_dir "${_clampi_cc_path}" DIRECTORY)
  endif()
  set(_clampi_sfx "")
  if(_clampi_cc_name MATCHES "^mpicc[^.]*(\\..+)$")
    set(_clampi_sfx "${CMAKE_MATCH_1}")
  endif()
  foreach(_launcher mpiexec${_clampi_sfx} mpirun${_clampi_sfx} mpiexec mpirun)
    if(EXISTS "${_clampi_cc_dir}/${_launcher}")
      set(MPIEXEC_EXECUTABLE "${_clampi_cc_dir}/${_launcher}" CACHE FILEPATH "mpiexec" FORCE)
      break()
    endif()
  endforeach()
endif()
find_package(MPI 3.0 REQUIRED COMPONENTS C)

# Which MPI is this? Tests and benchmarks need a few implementation-specific flags.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _clampi_mpiexec_version
  ERROR_VARIABLE _clampi_mpiexec_version)
if(_clampi_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(CLAMPI_MPI_FLAVOR openmpi)
  # 2-core machines: tests use up to 8 ranks
  set(CLAMPI_MPIEXEC_FLAGS --oversubscribe)
  if(_clampi_mpiexec_version MATCHES "Open MPI\\) ([0-9]+)")
    set(CLAMPI_OMPI_MAJOR ${CMAKE_MATCH_1})
  else()
    set(CLAMPI_OMPI_MAJOR 4)
  endif()
  if(CLAMPI_OMPI_MAJOR GREATER_EQUAL 5)
    # osc pt2pt is gone in Open MPI 5: RMA over TCP is osc rdma on btl tcp.
    set(CLAMPI_MPIEXEC_TCP_FLAGS --mca btl tcp,self --mca pml ob1 --mca osc rdma)
  else()
    set(CLAMPI_MPIEXEC_TCP_FLAGS --mca btl tcp,self --mca osc pt2pt)
  endif()
  # The one-sided component a plain reference run uses where the default one is unusable
  # for some operations (tests/ucx, tests/pmpi): Open MPI 4's osc/pt2pt; Open MPI 5 has none
  # but its default.
  if(CLAMPI_OMPI_MAJOR LESS 5)
    set(CLAMPI_OMPI_REFERENCE_OSC_ENV OMPI_MCA_osc=pt2pt)
  else()
    set(CLAMPI_OMPI_REFERENCE_OSC_ENV)
  endif()
else()
  # MPICH and the MPIs derived from it (Intel MPI): Hydra's launcher, -genv.
  set(CLAMPI_MPI_FLAVOR mpich)
  set(CLAMPI_MPIEXEC_FLAGS "")
  set(CLAMPI_MPIEXEC_TCP_FLAGS "")
endif()
# The implementation, where a flavour's members differ (openmpi, mpich, intel).
if(_clampi_mpiexec_version MATCHES "Intel\\(R\\) MPI")
  set(CLAMPI_MPI_IMPL intel)
else()
  set(CLAMPI_MPI_IMPL ${CLAMPI_MPI_FLAVOR})
endif()
# Environment every MPI test runs with (Open MPI refuses root without these).
set(CLAMPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1)
# Open MPI 5's osc/rdma computes 64-bit bitwise and every logical accumulate wrongly through
# its active-message atomics (tests/mpi_bugs/ompi5_osc_rdma_am_atomic_bitwise_logical.c): the
# plain reference runs take the path that computes them right.
if(CLAMPI_MPI_FLAVOR STREQUAL "openmpi" AND CLAMPI_OMPI_MAJOR GREATER_EQUAL 5)
  list(APPEND CLAMPI_TEST_ENV OMPI_MCA_osc_rdma_acc_use_amo=0)
  # Open MPI 5's btl/ofi calls sleep(1) when it closes in MPI_Init on a machine without a
  # libfabric network (every process, every run; docs/platforms.md).
  # A test's own OMPI_MCA_btl (ENV, listed after this) or --mca btl still wins.
  list(APPEND CLAMPI_TEST_ENV OMPI_MCA_btl=^ofi)
endif()
# The MPI-5 standard ABI (mpicc_abi: mpi_abi.h, libmpi_abi.so): one clampi build serves every
# MPI that implements it. Its libraries are named libclampi_abi / libclampi_pmpi_abi.
if("MPI_ABI" IN_LIST MPI_C_COMPILE_DEFINITIONS)
  set(CLAMPI_MPI_ABI ON)
  set(CLAMPI_MPI_IMPL abi)
  set(CLAMPI_LIB_SUFFIX _abi)
else()
  set(CLAMPI_MPI_ABI OFF)
  set(CLAMPI_LIB_SUFFIX "")
endif()
message(STATUS "clampi: MPI ${MPI_C_VERSION} (${CLAMPI_MPI_IMPL}), launcher ${MPIEXEC_EXECUTABLE}")
include(${CMAKE_CURRENT_LIST_DIR}/ClampiUCX.cmake)
