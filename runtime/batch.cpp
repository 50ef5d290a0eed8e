#include "runtime/batch.h"

namespace schedc::runtime {

std::string batch_error(const compiler::Problem& p, const char* const stride_names[3]) {
  if (p.batch < 1 || p.batch > kMaxBatch)
    return "a batch of " + std::to_string(p.batch) +
           " GEMMs is out of range (1 to 65535: one grid z index each)";
  const struct {
    const char *name, *ld_name;
    int64_t stride, rows, ld;
  } operands[3] = {{"A", "lda", p.stride_a, p.a_rows(), p.a_ld()},
                   {"B", "ldb", p.stride_b, p.b_rows(), p.b_ld()},
                   {"C", "ldc", p.stride_c, p.c_rows(), p.c_ld()}};
  for (int i = 0; i < 3; ++i) {
    const auto& o = operands[i];
    const int64_t matrix = o.rows * o.ld;
    if (o.stride != 0 && o.stride < matrix)
      return std::string(stride_names[i]) + " " + std::to_string(o.stride) + " is less than one " +
             o.name + " (" + std::to_string(o.rows) + " rows x " + o.ld_name + " " +
             std::to_string(o.ld) + " = " + std::to_string(matrix) +
             " elements): the GEMMs of a batch may not overlap";
    if (double(p.batch - 1) * double(o.stride ? o.stride : matrix) + double(matrix) >
        double(kMaxSpan))
      return std::string(stride_names[i]) + " " + std::to_string(o.stride ? o.stride : matrix) +
             ": the batch's " + o.name + " would span more than 2^46 elements";
  }
  return "";
}

}  // namespace schedc::runtime
