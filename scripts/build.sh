#!/usr/bin/env bash
# scripts/build.sh MPI [BUILD_DIR] [extra cmake args...]
# Configures and builds clampi against one MPI (openmpi or mpich) in build/MPI.
set -euo pipefail
mpi=${1:?usage: build.sh openmpi|mpich [dir] [cmake args]}
dir=${2:-build/$mpi}
shift $(( $# >= 2 ? 2 : 1 ))
cd "$(dirname "$0")/.."
cmake -S . -B "$dir" -G Ninja -DMPI_C_COMPILER="/usr/bin/mpicc.$mpi" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
