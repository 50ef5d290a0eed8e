#pragma once
// `run` and `bench`'s --batch, --stride-a, --stride-b and --stride-c (issue
// 18): a strided batch of GEMMs from the command line.
//  - --batch B (1 to 65535) on a file without `batch` appends `batch B` to
//    its text (CommandLineDirectives, cli/pipeline.h); on a file with
//    `batch N` it replaces N in the problem, the kernel being the same.
//  - The problem's batch is --batch, else the file's N, else 1 (one GEMM).
//  - Strides are elements from one GEMM's operand to the next's, packed
//    (rows x leading dimension) by default and when 0. GEMMs may not
//    overlap, A and B included: a stride is at least its operand's matrix
//    (runtime/batch.h); a stride needs a batch (--batch or the file's).

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "compiler/problem.h"

namespace schedc::cli {

struct BatchOptions {
  int64_t batch = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  CLI::Option* batch_option = nullptr;
  CLI::Option* stride_options[3] = {nullptr, nullptr, nullptr};  // A, B, C

  void add_to(CLI::App* sub);

  // What to append as `batch N` to a file's text: --batch when given, else 0.
  int64_t directive() const;
  // Checks --batch's range before anything is compiled: "" when it is fine,
  // else the error's text ("--batch 0: …").
  std::string check_batch() const;
  // `p` (shape, leading dimensions and layouts set) with the batch and the
  // strides, `schedule_batch` being the file's `batch` (0: none). Returns ""
  // when it is fine, else the error's text.
  std::string apply(compiler::Problem& p, int64_t schedule_batch) const;
};

}  // namespace schedc::cli
