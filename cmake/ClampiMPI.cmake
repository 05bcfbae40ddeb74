# Find MPI the standard way (pick one with -DMPI_C_COMPILER=/usr/bin/mpicc.mpich) and
# the mpiexec that belongs to it. Debian installs several MPIs side by side with
# suffixed names (mpicc.mpich / mpiexec.mpich), and FindMPI would otherwise pick up the
# unsuffixed /usr/bin/mpiexec, which belongs to whichever MPI is the system default.
if(MPI_C_COMPILER AND NOT MPIEXEC_EXECUTABLE)
  get_filename_component(_clampi_cc_name "${MPI_C_COMPILER}" NAME)
  get_filename_component(_clampi_cc_dir "${MPI_C_COMPILER}" DIRECTORY)
  if(_clampi_cc_name MATCHES "^mpicc\\.(.+)$")
    foreach(_launcher mpiexec mpirun)
      if(EXISTS "${_clampi_cc_dir}/${_launcher}.${CMAKE_MATCH_1}")
        set(MPIEXEC_EXECUTABLE "${_clampi_cc_dir}/${_launcher}.${CMAKE_MATCH_1}" CACHE FILEPATH "mpiexec")
        break()
      endif()
    endforeach()
  endif()
endif()
find_package(MPI 3.0 REQUIRED COMPONENTS C)

# Which MPI is this? Tests and benchmarks need a few implementation-specific flags.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _clampi_mpiexec_version
  ERROR_VARIABLE _clampi_mpiexec_version)
if(_clampi_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(CLAMPI_MPI_FLAVOR openmpi)
  # 2-core machines: tests use up to 8 ranks
  set(CLAMPI_MPIEXEC_FLAGS --oversubscribe)
  set(CLAMPI_MPIEXEC_TCP_FLAGS --mca btl tcp,self --mca osc pt2pt)
else()
  set(CLAMPI_MPI_FLAVOR mpich)
  set(CLAMPI_MPIEXEC_FLAGS "")
  set(CLAMPI_MPIEXEC_TCP_FLAGS "")
endif()
# Environment every MPI test runs with (Open MPI refuses root without these).
set(CLAMPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1)
message(STATUS "clampi: MPI ${MPI_C_VERSION} (${CLAMPI_MPI_FLAVOR}), launcher ${MPIEXEC_EXECUTABLE}")
