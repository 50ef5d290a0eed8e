#pragma once
// `run` and `bench`'s --alpha and --beta (issue 18): the scalars of the call,
// set on the schedule's epilogue, whose form (bias, relu) stays the file's.
// Generated kernels take alpha and beta as arguments and read C only where
// beta is not 0 at run time, so any values run on any schedule; validation
// uses the same values.

#include <CLI/CLI.hpp>

#include "compiler/schedule.h"

namespace schedc::cli {

struct Scalars {
  float alpha = 1.0f, beta = 0.0f;
  CLI::Option* alpha_option = nullptr;
  CLI::Option* beta_option = nullptr;

  void add_to(CLI::App* sub) {
    alpha_option = sub->add_option("--alpha", alpha,
                                   "alpha of C = alpha*A*B + beta*C (default: the schedule's "
                                   "`epilogue alpha`, else 1)");
    beta_option = sub->add_option("--beta", beta,
                                  "beta of C = alpha*A*B + beta*C (default: the schedule's "
                                  "`epilogue beta`, else 0; C is read only when it is not 0)");
  }
  // The schedule's epilogue with the values given on the command line.
  compiler::Epilogue applied_to(compiler::Epilogue e) const {
    if (alpha_option && alpha_option->count()) e.alpha = alpha;
    if (beta_option && beta_option->count()) e.beta = beta;
    return e;
  }
};

}  // namespace schedc::cli
