// clampi::numa_allocator<T>: a C++17 allocator for std::vector whose memory is first
// touched in parallel, each page by the OpenMP thread that a `schedule(static)` loop over
// the elements gives it (like HPX's numa_allocator, the hybrid-MPI locality paper section 4.2):
//
//   std::vector<double, clampi::numa_allocator<double>> u(n);   // pages placed per thread
//   #pragma omp parallel for schedule(static)
//   for (size_t i = 0; i < n; i++) u[i] = ...;                   // local accesses
//
// The vector's own value-initialization still runs on the calling thread, but after the
// parallel first touch, so it no longer decides where the pages live. Pass another owner
// function (page -> thread) for other access patterns. See <clampi/numa.h>.
#ifndef CLAMPI_NUMA_ALLOCATOR_HPP
#define CLAMPI_NUMA_ALLOCATOR_HPP
#include <clampi/numa.h>

#include <cstddef>
#include <limits>
#include <new>

namespace clampi {

template <class T> class numa_allocator {
  public:
    using value_type = T;

    numa_allocator() noexcept = default;
    // nthreads <= 0: omp_get_max_threads(); owner nullptr: the static schedule.
    explicit numa_allocator(int nthreads, clampi_numa_owner_fn owner = nullptr) noexcept
        : nthreads_(nthreads), owner_(owner) {}
    template <class U>
    numa_allocator(const numa_allocator<U> &o) noexcept : nthreads_(o.nthreads()), owner_(o.owner()) {}

    T *allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        void *p = clampi_numa_alloc(n ? n * sizeof(T) : 1, nthreads_, owner_);
        if (!p) throw std::bad_alloc();
        return static_cast<T *>(p);
    }
    void deallocate(T *p, std::size_t) noexcept { clampi_numa_free(p); }

    int nthreads() const noexcept { return nthreads_; }
    clampi_numa_owner_fn owner() const noexcept { return owner_; }

    // Any numa_allocator can free any other's memory: they all compare equal.
    template <class U> bool operator==(const numa_allocator<U> &) const noexcept { return true; }
    template <class U> bool operator!=(const numa_allocator<U> &) const noexcept { return false; }

  private:
    int nthreads_ = 0;
    clampi_numa_owner_fn owner_ = nullptr;
};

} // namespace clampi
#endif
