#include "runtime/nvrtc_compile.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "runtime/cuda_libs.h"
#include "runtime/cuda_paths.h"
#include "runtime/error.h"

namespace schedc::runtime {

namespace {

void check_nvrtc(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS)
    throw Error(Error::Kind::nvrtc, std::string(call) + " failed: " + nvrtc().GetErrorString(r));
}

// What NVRTC's log and our messages call the source: the person's file, or
// schedc's own output.
std::string source_name(const codegen::GeneratedKernel& kernel) {
  return kernel.source_file.empty() ? "schedc_kernel.cu" : kernel.source_file;
}

// RAII for nvrtcProgram.
struct Program {
  nvrtcProgram prog = nullptr;
  explicit Program(const codegen::GeneratedKernel& kernel) {
    check_nvrtc(nvrtc().CreateProgram(&prog, kernel.source.c_str(), source_name(kernel).c_str(), 0,
                                      nullptr, nullptr),
                "nvrtcCreateProgram");
  }
  ~Program() { nvrtc().DestroyProgram(&prog); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Returns the compile result; the log goes to `log`.
  nvrtcResult compile(const std::vector<std::string>& options, std::string& log) {
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    nvrtcResult r = nvrtc().CompileProgram(prog, int(argv.size()), argv.data());
    size_t size = 0;
    check_nvrtc(nvrtc().GetProgramLogSize(prog, &size), "nvrtcGetProgramLogSize");
    log.assign(size, '\0');
    if (size) check_nvrtc(nvrtc().GetProgramLog(prog, log.data()), "nvrtcGetProgramLog");
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return r;
  }
};

int to_int(const std::string& s) {
  return int(std::stol(s));
}

}  // namespace

// Where a CUDA driver is installed, NVRTC keeps compiled programs in the
// driver's compute cache (~/.nv/ComputeCache) and, on a hit there, returns no
// ptxas log: registers and spills would go unreported (seen on the H200
// machine: the second compile of a source printed nothing). schedc has its own
// cache, which keeps the log, so the driver's is turned off before any NVRTC
// call (at program start), unless the user set CUDA_CACHE_DISABLE themselves.
[[maybe_unused]] const bool kDriverCacheOff =
    setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0) == 0;

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check_nvrtc(nvrtc().Version(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> nvrtc_options(const codegen::GeneratedKernel& kernel,
                                       const std::string& arch, bool verbose, bool split,
                                       const std::string& entry) {
  // NVRTC optimizes by default (it rejects -O3). -lineinfo lets
  // compute-sanitizer and ncu point at generated source lines.
  // An architecture-specific kernel (wgmma, setmaxnreg) compiles for the "a"
  // variant of the architecture: sm_90 -> sm_90a.
  const bool suffix = kernel.arch_specific && !arch.empty() && arch.back() != 'a';
  std::vector<std::string> opts = {"--gpu-architecture=" + arch + (suffix ? "a" : ""),
                                   "-default-device", "-lineinfo", "--std=c++17"};
  if (kernel.needs_cuda_headers) {
    std::string inc = cuda_include_dir();
    if (inc.empty())
      throw Error(Error::Kind::nvrtc,
                  "the generated kernel needs the CUDA headers (<mma.h>), but no CUDA include "
                  "directory was found: set CUDA_HOME");
    opts.push_back("-I" + inc);
  }
  if (verbose) opts.push_back("--ptxas-options=-v");
  // NVVM's optimizer, not ptxas (10-20 ms a kernel), takes most of a compile;
  // --split-compile=0 runs it on all of the host's cores. The machine code is
  // the same (sgemm_best, sm_90: identical .text sections; only the embedded
  // PTX text and the tool note differ); sgemm_best compiled in 2.8-3.1 s
  // instead of 4.7-5.0 on 2 cores, hgemm_best in 1.1 s instead of 1.6.
  if (split) opts.push_back("--split-compile=0");
  if (!entry.empty() && kernel.entry_guards) {
    opts.push_back("-DSCHEDC_ONE_ENTRY");
    opts.push_back("-DSCHEDC_ENTRY_" + entry);
  }
  // SCHEDC_NVRTC_OPTIONS="--Ofast-compile=min ...": more options, separated
  // by spaces, for measuring what NVRTC's own knobs do (docs/runtime.md).
  // They are part of the cache key like every other option.
  if (const char* extra = std::getenv("SCHEDC_NVRTC_OPTIONS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;) opts.push_back(w);
  }
  return opts;
}

CubinResult compile_to_cubin(const codegen::GeneratedKernel& kernel, const std::string& arch,
                             const std::string& entry) {
  auto t0 = std::chrono::steady_clock::now();
  CubinResult out;
  nvrtcResult r;
  {
    Program p(kernel);
    r = p.compile(nvrtc_options(kernel, arch, true, true, entry), out.log);
    // An NVRTC without --split-compile (older than 12.x) compiles serially.
    if (r == NVRTC_ERROR_INVALID_OPTION)
      r = p.compile(nvrtc_options(kernel, arch, true, false, entry), out.log);
    if (r == NVRTC_SUCCESS) {
      size_t size = 0;
      check_nvrtc(nvrtc().GetCUBINSize(p.prog, &size), "nvrtcGetCUBINSize");
      out.cubin.resize(size);
      check_nvrtc(nvrtc().GetCUBIN(p.prog, out.cubin.data()), "nvrtcGetCUBIN");
    }
  }
  if (r != NVRTC_SUCCESS) {
    // With -v on, a failing ptxas loses its error line: compile again without it.
    Program p(kernel);
    std::string log;
    p.compile(nvrtc_options(kernel, arch, false, false, entry), log);
    const bool generated = kernel.source_file.empty();
    std::ostringstream msg;
    msg << "NVRTC rejected "
        << (generated ? "the generated kernel" : "the kernel source " + kernel.source_file)
        << (entry.empty() || !kernel.entry_guards ? "" : " (entry " + entry + " alone)") << " for "
        << arch << " (" << nvrtc().GetErrorString(r) << ").\n";
    if (generated)
      msg << "This is a bug in schedc's code generator; please report it with the .sched file.\n";
    msg << "--- NVRTC log ---\n"
        << (log.empty() ? out.log : log) << "\n--- "
        << (generated ? "generated source" : kernel.source_file) << " ---\n"
        << number_lines(kernel.source);
    throw Error(generated ? Error::Kind::nvrtc : Error::Kind::rejected_source, msg.str());
  }
  out.functions = parse_ptxas_log(out.log);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::map<std::string, PtxasInfo> parse_ptxas_log(const std::string& log) {
  // ptxas -v prints, per function:
  //   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
  //   ptxas info    : Function properties for NAME
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 30 registers, used 1 barriers, 8192 bytes smem, 392 bytes cmem[0]
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex props_re(R"(Function properties for ([A-Za-z_$][\w$]*))");
  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  std::map<std::string, PtxasInfo> out;
  std::string current;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry_re)) {
      current = m[1];
      out[current].entry = true;
    } else if (std::regex_search(line, m, props_re)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, frame_re)) {
      PtxasInfo& f = out[current];
      f.stack_frame_bytes = to_int(m[1]);
      f.spill_store_bytes = to_int(m[2]);
      f.spill_load_bytes = to_int(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used_re)) {
      PtxasInfo& f = out[current];
      f.registers = to_int(m[1]);
      if (std::regex_search(line, m, smem_re)) f.shared_bytes = to_int(m[1]);
    }
  }
  return out;
}

std::string number_lines(const std::string& source) {
  std::ostringstream out;
  std::istringstream in(source);
  std::string line;
  int n = 0;
  char buf[16];
  while (std::getline(in, line)) {
    std::snprintf(buf, sizeof buf, "%5d | ", ++n);
    out << buf << line << '\n';
  }
  return out.str();
}

}  // namespace schedc::runtime
