// clampi::numa_allocator<T> with std::vector and std algorithms; under the sampler
// (check_sample.py numa) each page of `u` must be first touched by the thread the
// static schedule gives it. Prints "OWN u <address> <owners>" like numa_alloc_test.
#include <clampi/numa_allocator.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <unistd.h>
#include <vector>

#define CHECK(c)                                                                       \
    do {                                                                               \
        if (!(c)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

constexpr int NT = 3;
using numa_vec = std::vector<double, clampi::numa_allocator<double>>;

int main() {
    const std::size_t ps = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t n = 20 * ps / sizeof(double) + 7;
    numa_vec u(n, clampi::numa_allocator<double>(NT));
    CHECK(u.size() == n);
    CHECK(reinterpret_cast<std::uintptr_t>(u.data()) % ps == 0);
    CHECK(std::all_of(u.begin(), u.end(), [](double x) { return x == 0.0; }));
    std::iota(u.begin(), u.end(), 1.0);
    CHECK(std::accumulate(u.begin(), u.end(), 0.0) == double(n) * double(n + 1) / 2.0);
    std::sort(u.begin(), u.end(), std::greater<double>());
    CHECK(u.front() == double(n) && u.back() == 1.0);
    numa_vec v = u; // copy: a second parallel first touch
    CHECK(v == u);
    for (int i = 0; i < 10000; i++) v.push_back(-i); // reallocations
    CHECK(v.size() == n + 10000 && v[n] == 0.0 && v.back() == -9999.0);
    std::vector<double> plain(u.begin(), u.end());
    CHECK(std::equal(plain.begin(), plain.end(), u.begin()));
    std::vector<int, clampi::numa_allocator<int>> small(3); // tiny: one page
    small[2] = 7;
    CHECK(small[0] == 0 && small[2] == 7);
    const std::size_t npages = (n * sizeof(double) + ps - 1) / ps;
    std::printf("OWN u %p", static_cast<void *>(u.data()));
    for (std::size_t p = 0; p < npages; p++) std::printf(" %d", clampi_numa_owner_static(p, npages, NT));
    std::printf("\nnuma_vector_test: ok\n");
    return 0;
}
