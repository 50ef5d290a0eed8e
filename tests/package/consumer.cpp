// Built against the installed schedc package (tests/package/CMakeLists.txt):
// compiles a schedule, a broken one and a convolution through the API, on
// the CPU, and exits non-zero at the first thing that is not as documented.
#include <schedc/schedc.h>

#include <cstdio>
#include <string>

static int fails = 0;
static void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++fails;
  }
}

int main() {
  std::printf("schedc %s\n", schedc::version());
  schedc::CompileOptions o;
  o.file_name = "consumer.sched";
  schedc::CompileResult r =
      schedc::compile("tile 128x128x8; thread 8x8 split 2x2; warp 32x64\nvectorize 4\n", o);
  expect(r.ok(), "a valid schedule compiles");
  if (r.ok()) {
    expect(r.kernel->entry_name() == "schedc_consumer", "the kernel is named after the file");
    expect(r.kernel->cuda_source().find("schedc_consumer(") != std::string::npos,
           "the CUDA source holds the entry");
    expect(r.kernel->schedule_text().find("thread 8x8 split 2x2") != std::string::npos,
           "the resolved schedule is printed");
    std::printf("%s: %d threads, %lld bytes of shared memory, %zu bytes of CUDA\n",
                r.kernel->entry_name().c_str(), r.kernel->block_threads(),
                (long long)r.kernel->shared_memory_bytes(), r.kernel->cuda_source().size());
  }
  schedc::CompileResult bad = schedc::compile("tile 128x128x8\nthread 8x8 split 3x2\n", o);
  expect(!bad.ok() && !bad.diagnostics.empty(), "a broken schedule gives diagnostics");
  if (!bad.diagnostics.empty()) {
    const schedc::Diagnostic& d = bad.diagnostics[0];
    expect(d.where.file == "consumer.sched" && d.where.line == 2, "the diagnostic has its place");
    std::printf("diagnostic as a value: %s:%d:%d: %s\n", d.where.file.c_str(), d.where.line,
                d.where.column, d.message.c_str());
  }
  // A convolution module (since 0.2.1): its geometry, and a launch's mistake
  // refused as an ArgumentError before any device is looked for.
  schedc::CompileResult conv = schedc::compile(
      "conv 1x9x7x16 filter 40x3x3 stride 1 pad 1\ndtype s8\ntile 128x64x128\nwarp 64x64\n"
      "wgmma s8\ntma\nstages 2\nswizzle smem\nwarp_specialize\n",
      o);
  expect(conv.ok() && conv.kernel->is_convolution(), "a conv schedule is a convolution module");
  if (conv.ok() && conv.kernel->convolution()) {
    const schedc::ConvGeometry g = *conv.kernel->convolution();
    expect(g.p() == 9 && g.q() == 7, "the convolution's output is 9x7");
    std::string why = "no error";
    try {
      conv.kernel->launch(schedc::Conv{g});  // no tensors
    } catch (const schedc::ArgumentError& e) {
      why = e.what();
    }
    expect(why.find("must be device pointers") != std::string::npos,
           "a convolution without tensors is an ArgumentError");
    std::printf("convolution %lldx%lldx%lldx%lld -> %lldx%lld: %s\n", (long long)g.n,
                (long long)g.h, (long long)g.w, (long long)g.c, (long long)g.p(), (long long)g.q(),
                why.c_str());
  }
  std::printf("%s\n", fails ? "consumer: FAILED" : "consumer: ok");
  return fails ? 1 : 0;
}
