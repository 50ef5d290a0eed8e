// The library API (include/schedc/schedc.h) over the pipeline the command
// line runs (cli/pipeline.h) and the runtime's JIT and launch
// (api/kernel_impl.h); a convolution's launch is api/convolution.cpp.
#include "schedc/schedc.h"

#include <sstream>

#include "api/kernel_impl.h"
#include "cli/pipeline.h"
#include "compiler/schedule.h"
#include "compiler/target.h"
#include "runtime/batch.h"

namespace schedc {

namespace {

SourceLocation location(const dsl::SourceSpan& span, const std::string& file) {
  SourceLocation l;
  l.file = file;
  if (span.valid()) {
    l.line = int(span.line);
    l.column = int(span.col);
    l.length = int(span.length);
  }
  return l;
}

Diagnostic convert(const dsl::Diagnostic& d, const std::string& file) {
  Diagnostic out;
  out.severity = d.severity == dsl::Severity::warning ? Diagnostic::Severity::warning
                                                      : Diagnostic::Severity::error;
  out.where = location(d.span, file);
  out.message = d.message;
  for (const dsl::Note& n : d.notes) out.notes.push_back({location(n.span, file), n.message});
  return out;
}

// The batch and strides of `g` set on `p` (its sizes, leading dimensions and
// layouts set), checked: 1 to 65535 GEMMs, more than one for a batched
// kernel only, strides of at least one matrix (0: packed).
void batch_of(const Gemm& g, const codegen::GeneratedKernel& kernel, compiler::Problem& p) {
  p.batch = g.batch;
  p.stride_a = g.stride_a;
  p.stride_b = g.stride_b;
  p.stride_c = g.stride_c;
  static const char* const kStrideNames[3] = {"stride_a", "stride_b", "stride_c"};
  if (std::string why = runtime::batch_error(p, kStrideNames); !why.empty())
    throw ArgumentError("schedc: " + why);
  if (g.batch > 1 && !kernel.batched)
    throw ArgumentError(
        "schedc: a batch of " + std::to_string(g.batch) +
        " GEMMs: the kernel computes one GEMM; its schedule has no 'batch' directive");
}

// The problem's sizes and leading dimensions as the kernels' ABI takes them
// (int), and its batch, checked.
compiler::Problem problem_of(const Gemm& g, compiler::DType dtype,
                             const codegen::GeneratedKernel& kernel) {
  check_range(g.m, "M", 1);
  check_range(g.n, "N", 1);
  check_range(g.k, "K", 1);
  check_range(g.lda, "lda", 0);
  check_range(g.ldb, "ldb", 0);
  check_range(g.ldc, "ldc", 0);
  // The schedule's layouts: lda, ldb and ldc are in them.
  compiler::Problem p =
      kernel.in_layouts(compiler::Problem{g.m, g.n, g.k, g.lda, g.ldb, g.ldc, dtype});
  const bool a_col = p.a_col, b_col = p.b_col, c_col = p.c_col;
  if (p.a_ld() < p.a_row_len() || p.b_ld() < p.b_row_len() || p.c_ld() < p.c_row_len())
    throw ArgumentError(
        std::string("schedc: a leading dimension is smaller than its row in memory (lda >= ") +
        (a_col ? "M, A column-major" : "K") + ", ldb >= " + (b_col ? "K, B column-major" : "N") +
        ", ldc >= " + (c_col ? "M, C column-major" : "N") + ")");
  batch_of(g, kernel, p);
  if (!g.a || !g.b || !g.c)
    throw ArgumentError("schedc: A, B and C must be device pointers, not null");
  return p;
}

}  // namespace

Kernel::Kernel(std::unique_ptr<KernelImpl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;

std::string Kernel::schedule_text() const {
  return compiler::to_sched_text(impl_->compiled().schedule);
}
const std::string& Kernel::cuda_source() const {
  return impl_->compiled().kernel.source;
}
const std::string& Kernel::entry_name() const {
  return impl_->compiled().kernel.main.name;
}
const std::string& Kernel::dtype() const {
  return impl_->compiled().kernel.dtype;
}
std::string Kernel::c_dtype() const {
  const codegen::GeneratedKernel& k = impl_->compiled().kernel;
  if (!k.c_dtype.empty()) return k.c_dtype;
  return k.dtype == "s8" ? "s32" : k.dtype;
}
bool Kernel::takes_scale() const {
  return impl_->compiled().kernel.channel_scale;
}
std::string Kernel::arch() const {
  return impl_->compiled().target.arch_name();
}
std::string Kernel::layout() const {
  return impl_->compiled().kernel.layout();
}
int Kernel::block_threads() const {
  const codegen::Dim3& b = impl_->compiled().kernel.main.block;
  return int(b.x * b.y * b.z);
}
int64_t Kernel::shared_memory_bytes() const {
  return int64_t(impl_->compiled().plan.smem_bytes);
}

void Kernel::launch(const Gemm& gemm, void* stream) const {
  const cli::Compiled& c = impl_->compiled();
  if (is_convolution())
    throw ArgumentError("schedc: " + entry_name() +
                        " computes a convolution (its schedule has 'conv'): launch it with a "
                        "schedc::Conv, not a schedc::Gemm");
  const compiler::Problem p = problem_of(gemm, c.schedule.dtype, c.kernel);
  runtime::GemmArgs args{gemm.a, gemm.b, gemm.c, gemm.alpha, gemm.beta, gemm.bias};
  args.scale = gemm.scale;
  impl_->launch(p, args, stream);
}

namespace {

CompileResult compile_checked(std::shared_ptr<dsl::SourceFile> file, const CompileOptions& o) {
  CompileResult r;
  compiler::Target target;
  if (!compiler::target_for_arch(o.arch, target)) {
    Diagnostic d;
    d.where.file = file->name();
    d.message = "unknown architecture '" + o.arch + "' (sm_80, sm_86, sm_89 or sm_90)";
    r.rendered = file->name() + ": error: " + d.message + "\n";
    r.diagnostics.push_back(std::move(d));
    return r;
  }
  std::ostringstream printed;
  std::vector<dsl::Diagnostic> kept;
  std::optional<cli::Compiled> c = cli::compile_source(file, target, printed, &kept);
  for (const dsl::Diagnostic& d : kept) r.diagnostics.push_back(convert(d, file->name()));
  r.rendered = printed.str();
  if (c) r.kernel = KernelImpl::make(std::move(*c));
  return r;
}

}  // namespace

CompileResult compile(std::string_view text, const CompileOptions& options) {
  return compile_checked(std::make_shared<dsl::SourceFile>(options.file_name, std::string(text)),
                         options);
}

CompileResult compile_file(const std::string& path, const CompileOptions& options) {
  std::string why;
  std::optional<std::string> text = cli::read_file(path, why);
  if (!text) {
    CompileResult r;
    Diagnostic d;
    d.where.file = path;
    d.message = why;
    r.rendered = path + ": error: " + why + "\n";
    r.diagnostics.push_back(std::move(d));
    return r;
  }
  return compile_checked(std::make_shared<dsl::SourceFile>(path, std::move(*text)), options);
}

const char* version() {
  return SCHEDC_VERSION_STRING;
}

}  // namespace schedc
