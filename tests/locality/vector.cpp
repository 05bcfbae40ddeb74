// C++ allocations: new[] and std::vector (its storage comes from operator new
// inside libstdc++ headers; the location is the program's line, the name the
// variable's).
#include <vector>

int main() {
    std::vector<double> field(4096, 0.0); // @VECTOR
    double *raw = new double[1024];       // @NEW
    raw[0] = 1.0;
    field[600] = raw[0];
    delete[] raw;
    return field[600] == 1.0 ? 0 : 1;
}
