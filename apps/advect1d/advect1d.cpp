// advect1d: the hybrid-MPI locality paper (section 2.4) demo for clampi-locality.
//
// Solves u_t + u_x = 0 on [0,1]^3 with u(x,0) = u0(x), u(0,t) = 0 and compares with the exact
// solution u0(x - t). The x axis is split across MPI ranks (two ghost cells from the left
// neighbour per step); each rank's block is updated by OpenMP threads, z planes split with
// the static schedule. Second-order upwind (Beam-Warming) in x.
//
// One source, three builds that differ only in how the big arrays get their first touch:
//   ADVECT1D_BASELINE      serial std::vector::resize by the master thread (the hybrid-MPI locality paper, Fig. 2):
//                          every page lands on the master's NUMA node
//   ADVECT1D_FIRST_TOUCH   reserve, parallel first touch with the solver's own loop, then
//                          resize (the hybrid-MPI locality paper, Fig. 3)
//   ADVECT1D_NUMA_ALLOCATOR std::vector with clampi::numa_allocator (the hybrid-MPI locality paper, Fig. 4)
//
// Exit status: 0 when the max error is within --tol, 1 when not, 2 on bad arguments.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(ADVECT1D_NUMA_ALLOCATOR)
#include <clampi/numa_allocator.hpp>
using Field = std::vector<double, clampi::numa_allocator<double>>;
static const char *const kVariant = "numa-allocator";
#elif defined(ADVECT1D_FIRST_TOUCH)
using Field = std::vector<double>;
static const char *const kVariant = "first-touch";
#elif defined(ADVECT1D_BASELINE)
using Field = std::vector<double>;
static const char *const kVariant = "baseline";
#else
#error "define one of ADVECT1D_BASELINE, ADVECT1D_FIRST_TOUCH, ADVECT1D_NUMA_ALLOCATOR"
#endif

#if defined(__has_include)
#if __has_include(<clampi/locality.h>)
#include <clampi/locality.h> // CLAMPI_LOCALITY_NAME: names a structure for clampi-locality
#endif
#endif

namespace {

// Names the structure for clampi-locality explicitly (the tracer also names it from the
// allocating source line); nothing without <clampi/locality.h>.
inline void name_structure(const void *p, const char *name) {
#if defined(CLAMPI_LOCALITY_NAME)
    CLAMPI_LOCALITY_NAME(p, name);
#else
    (void)p;
    (void)name;
#endif
}

constexpr std::size_t kGhosts = 2; // Beam-Warming reads u[i-1] and u[i-2]
constexpr double kPi = 3.14159265358979323846;

struct Options {
    long nx = 192, ny = 192, nz = 192; // ~1.5 s on 2 idle cores with 2 threads
    double t_end = 0.5;
    double cfl = 0.8;
    double tol = -1.0; // default: tol_default() for the grid and end time
};

// Beam-Warming is second order: the max error measured here is about 105 dx^2 at t = 0.5
// (cfl 0.8); the default allows 2.4x that, scaled with the end time. A wrong ghost exchange
// or index gives errors of the pulse's size (0.1 .. 1).
double tol_default(const Options &o) {
    const double dx = 1.0 / static_cast<double>(o.nx);
    return 500.0 * dx * dx * std::max(o.t_end, 0.1);
}

// A smooth pulse that is zero near x = 0, consistent with u(0,t) = 0.
double u0(double x) {
    const double a = 0.1, w = 0.4;
    if (x <= a || x >= a + w) return 0.0;
    const double s = std::sin(kPi * (x - a) / w);
    return s * s * s * s;
}

// This rank's slab of the x axis, its cells stored with kGhosts ghost cells in front.
struct Block {
    long x0 = 0, lnx = 0; // first global x cell, local cell count
    std::size_t numX = 0; // lnx + ghosts
    std::size_t ny = 0, nz = 0;
    std::size_t xyPlane = 0; // numX * ny
    std::size_t points = 0;  // numX * ny * nz
    std::size_t index(std::size_t iX, std::size_t iY, std::size_t iZ) const { return iZ * xyPlane + iY * numX + iX; }
};

#if defined(ADVECT1D_FIRST_TOUCH)
// The hybrid-MPI locality paper's Fig. 3: each thread writes the z planes it will update in the solver (same loop,
// same static schedule) before anything else touches the reserved memory.
void parallel_first_touch(double *p, std::size_t n, std::size_t nz) {
    const std::size_t plane = n / nz;
#pragma omp parallel for schedule(static)
    for (std::size_t iZ = 0; iZ < nz; iZ++) std::memset(p + iZ * plane, 0, plane * sizeof(double));
}
#endif

bool parse(int argc, char **argv, Options &o, std::string &err) {
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            err = "usage: advect1d [--n N | --nx N --ny N --nz N] [--t-end T] [--cfl C] [--tol E]";
            return false;
        }
        if (i + 1 >= argc) {
            err = "missing value after " + a;
            return false;
        }
        const char *v = argv[++i];
        char *end = nullptr;
        const double d = std::strtod(v, &end);
        if (end == v || *end != '\0' || !std::isfinite(d)) {
            err = "not a number: " + a + " " + v;
            return false;
        }
        if (a == "--n")
            o.nx = o.ny = o.nz = static_cast<long>(d);
        else if (a == "--nx")
            o.nx = static_cast<long>(d);
        else if (a == "--ny")
            o.ny = static_cast<long>(d);
        else if (a == "--nz")
            o.nz = static_cast<long>(d);
        else if (a == "--t-end")
            o.t_end = d;
        else if (a == "--cfl")
            o.cfl = d;
        else if (a == "--tol")
            o.tol = d;
        else {
            err = "unknown option " + a;
            return false;
        }
    }
    if (o.nx < 1 || o.ny < 1 || o.nz < 1 || o.nx > (1L << 24) || o.ny > (1L << 24) || o.nz > (1L << 24)) {
        err = "grid sizes must be between 1 and 2^24";
        return false;
    }
    if (!(o.cfl > 0.0 && o.cfl <= 1.0) || !(o.t_end >= 0.0) || !(o.tol > 0.0 || o.tol == -1.0)) {
        err = "need 0 < cfl <= 1, t-end >= 0, tol > 0";
        return false;
    }
    if (o.tol < 0) o.tol = tol_default(o);
    return true;
}

// One Beam-Warming step of the whole block: unew from u (ghosts filled).
void step(const Field &u, Field &unew, const Block &b, double c) {
    const double a1 = 0.5 * c, a2 = 0.5 * c * c;
    const double *__restrict up = u.data();
    double *__restrict vp = unew.data();
#pragma omp parallel for schedule(static)
    for (std::size_t iZ = 0; iZ < b.nz; iZ++)
        for (std::size_t iY = 0; iY < b.ny; iY++) {
            const std::size_t row = b.index(0, iY, iZ);
            for (std::size_t iX = kGhosts; iX < b.numX; iX++) {
                const double u0v = up[row + iX], u1 = up[row + iX - 1], u2 = up[row + iX - 2];
                vp[row + iX] = u0v - a1 * (3.0 * u0v - 4.0 * u1 + u2) + a2 * (u0v - 2.0 * u1 + u2);
            }
        }
}

// Ghost cells: the last kGhosts cells of the left neighbour's rows, or the inflow boundary
// value u(0,t) = 0 on rank 0.
void exchange(Field &u, Field &sendBuf, Field &recvBuf, const Block &b, int rank, int size) {
    const std::size_t rows = b.ny * b.nz;
    if (rank + 1 < size) {
#pragma omp parallel for schedule(static)
        for (std::size_t iZ = 0; iZ < b.nz; iZ++)
            for (std::size_t iY = 0; iY < b.ny; iY++)
                for (std::size_t k = 0; k < kGhosts; k++)
                    sendBuf[(iZ * b.ny + iY) * kGhosts + k] = u[b.index(b.numX - kGhosts + k, iY, iZ)];
    }
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(sendBuf.data(), static_cast<int>(rows * kGhosts), MPI_DOUBLE, right, 7, recvBuf.data(),
                 static_cast<int>(rows * kGhosts), MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel for schedule(static)
    for (std::size_t iZ = 0; iZ < b.nz; iZ++)
        for (std::size_t iY = 0; iY < b.ny; iY++)
            for (std::size_t k = 0; k < kGhosts; k++)
                u[b.index(k, iY, iZ)] = rank > 0 ? recvBuf[(iZ * b.ny + iY) * kGhosts + k] : 0.0;
}

} // namespace

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    Options o;
    std::string err;
    if (!parse(argc, argv, o, err) || o.nx < static_cast<long>(kGhosts) * size) {
        if (err.empty()) err = "--nx must be at least " + std::to_string(kGhosts) + " cells per rank";
        if (rank == 0) std::fprintf(stderr, "advect1d: %s\n", err.c_str());
        MPI_Finalize();
        return 2;
    }

    Block b;
    b.x0 = o.nx * rank / size;
    b.lnx = o.nx * (rank + 1) / size - b.x0;
    b.numX = static_cast<std::size_t>(b.lnx) + kGhosts;
    b.ny = static_cast<std::size_t>(o.ny);
    b.nz = static_cast<std::size_t>(o.nz);
    b.xyPlane = b.numX * b.ny;
    b.points = b.xyPlane * b.nz;

    const double dx = 1.0 / static_cast<double>(o.nx);
    const long steps = o.t_end > 0 ? static_cast<long>(std::ceil(o.t_end / (o.cfl * dx))) : 0;
    const double c = steps > 0 ? o.t_end / static_cast<double>(steps) / dx : 0.0; // exact CFL number

    // The four structures, allocated where they are declared so that the tracer names them
    // from the source line (one structure per line).
    const std::size_t halo = b.ny * b.nz * kGhosts;
#if defined(ADVECT1D_BASELINE)
    // the hybrid-MPI locality paper, Fig. 2: resize() zero-fills on the master thread, which so touches every page first
    Field u;
    u.resize(b.points);
    Field uNew;
    uNew.resize(b.points);
    Field sendBuf;
    sendBuf.resize(halo);
    Field recvBuf;
    recvBuf.resize(halo);
#elif defined(ADVECT1D_FIRST_TOUCH)
    // the hybrid-MPI locality paper, Fig. 3: reserve (no touch), parallel first touch, resize (pages are placed already)
    Field u;
    u.reserve(b.points);
    parallel_first_touch(u.data(), b.points, b.nz);
    u.resize(b.points);
    Field uNew;
    uNew.reserve(b.points);
    parallel_first_touch(uNew.data(), b.points, b.nz);
    uNew.resize(b.points);
    Field sendBuf;
    sendBuf.reserve(halo);
    parallel_first_touch(sendBuf.data(), halo, b.nz);
    sendBuf.resize(halo);
    Field recvBuf;
    recvBuf.reserve(halo);
    parallel_first_touch(recvBuf.data(), halo, b.nz);
    recvBuf.resize(halo);
#else
    // the hybrid-MPI locality paper, Fig. 4: the allocator first-touches in parallel with the loops' static schedule
    Field u(b.points);
    Field uNew(b.points);
    Field sendBuf(halo);
    Field recvBuf(halo);
#endif
    name_structure(u.data(), "u");
    name_structure(uNew.data(), "uNew");
    name_structure(sendBuf.data(), "sendBuf");
    name_structure(recvBuf.data(), "recvBuf");

    // u(x, 0) = u0(x) at cell centres; ghosts start at the boundary value 0
#pragma omp parallel for schedule(static)
    for (std::size_t iZ = 0; iZ < b.nz; iZ++)
        for (std::size_t iY = 0; iY < b.ny; iY++)
            for (std::size_t iX = 0; iX < b.numX; iX++) {
                const double x =
                    (static_cast<double>(b.x0 + static_cast<long>(iX) - static_cast<long>(kGhosts)) + 0.5) * dx;
                u[b.index(iX, iY, iZ)] = iX < kGhosts ? 0.0 : u0(x);
            }

    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long s = 0; s < steps; s++) {
        exchange(u, sendBuf, recvBuf, b, rank, size);
        step(u, uNew, b, c);
        std::swap(u, uNew);
    }
    const double elapsed = MPI_Wtime() - t0;

    double local_err = 0.0;
#pragma omp parallel for schedule(static) reduction(max : local_err)
    for (std::size_t iZ = 0; iZ < b.nz; iZ++)
        for (std::size_t iY = 0; iY < b.ny; iY++)
            for (std::size_t iX = kGhosts; iX < b.numX; iX++) {
                const double x =
                    (static_cast<double>(b.x0 + static_cast<long>(iX) - static_cast<long>(kGhosts)) + 0.5) * dx;
                local_err = std::max(local_err, std::fabs(u[b.index(iX, iY, iZ)] - u0(x - o.t_end)));
            }
    double max_err = 0.0, max_time = 0.0;
    MPI_Allreduce(&local_err, &max_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&elapsed, &max_time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const bool ok = max_err <= o.tol;
    if (rank == 0)
        std::printf("advect1d: variant=%s ranks=%d threads=%d grid=%ldx%ldx%ld steps=%ld cfl=%.3f t=%g "
                    "time=%.3f s max_error=%.3e tol=%.1e %s\n",
                    kVariant, size, omp_get_max_threads(), o.nx, o.ny, o.nz, steps, c, o.t_end, max_time, max_err,
                    o.tol, ok ? "OK" : "FAILED");
    MPI_Finalize();
    return ok ? 0 : 1;
}
