#!/usr/bin/env bash
# The demo: installs what is missing, builds clampi against Open MPI, and runs a short
# LCC comparison on 4 ranks over TCP loopback (the network stand-in; clampi's
# same-node shortcut off): uncached MPI_Get against clampi with a fixed cache and with
# the adaptive one, side by side in one run, verified against a serial count. Prints
# the table. The full benchmark report is bench/report/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh openmpi build/demo-openmpi -DCLAMPI_BUILD_TESTS=OFF -DCLAMPI_BUILD_BENCH=OFF -DCLAMPI_BUILD_APPS=ON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "clampi demo: local clustering coefficient of an R-MAT graph (scale 11, edge factor 16), 4 ranks, TCP"
CLAMPI_SHM_DIRECT=0 mpiexec.openmpi -n 4 --oversubscribe --mca btl tcp,self --mca osc pt2pt \
  build/demo-openmpi/apps/lcc --scale 11 --edgefactor 16 --trials 3 --verify \
  --config uncached --config fixed:16384:8M --config adaptive:256:256K
echo "(the memory-locality demo, the hybrid-MPI locality paper: scripts/locality_demo.sh)"
