#include "cli/batch_options.h"

#include "runtime/batch.h"

namespace schedc::cli {

namespace {

const char* const kStrideFlags[3] = {"--stride-a", "--stride-b", "--stride-c"};

bool given(const CLI::Option* o) {
  return o && o->count() > 0;
}

}  // namespace

void BatchOptions::add_to(CLI::App* sub) {
  batch_option = sub->add_option(
      "--batch", batch,
      "a strided batch of B GEMMs, 1 to 65535 (as cublasGemmStridedBatchedEx): appends `batch B` "
      "to a file "
      "without `batch`; with one, B replaces its count (default: the file's `batch`, else one "
      "GEMM)");
  const char* operands[3] = {"A", "B", "C"};
  int64_t* values[3] = {&stride_a, &stride_b, &stride_c};
  for (int i = 0; i < 3; ++i)
    stride_options[i] =
        sub->add_option(kStrideFlags[i], *values[i],
                        std::string("elements from one GEMM's ") + operands[i] +
                            " to the next's in a batch, at least one " + operands[i] +
                            " (rows x leading dimension: GEMMs may not overlap; default and 0: "
                            "packed, exactly that)");
}

int64_t BatchOptions::directive() const {
  return given(batch_option) ? batch : 0;
}

std::string BatchOptions::check_batch() const {
  if (given(batch_option) && (batch < 1 || batch > runtime::kMaxBatch))
    return "--batch " + std::to_string(batch) +
           ": a batch is 1 to 65535 GEMMs (one grid z index each)";
  return "";
}

std::string BatchOptions::apply(compiler::Problem& p, int64_t schedule_batch) const {
  if (std::string why = check_batch(); !why.empty()) return why;
  p.batch = given(batch_option) ? batch : schedule_batch > 0 ? schedule_batch : 1;
  int64_t* strides[3] = {&p.stride_a, &p.stride_b, &p.stride_c};
  const int64_t values[3] = {stride_a, stride_b, stride_c};
  for (int i = 0; i < 3; ++i) {
    if (!given(stride_options[i])) continue;
    if (!given(batch_option) && schedule_batch == 0)
      return std::string(kStrideFlags[i]) +
             " needs a batch: give --batch B, or run a schedule with `batch N`";
    *strides[i] = values[i];  // 0: packed, as in compiler::Problem and the library
  }
  return runtime::batch_error(p, kStrideFlags);
}

}  // namespace schedc::cli
