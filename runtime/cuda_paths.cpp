#include "runtime/cuda_paths.h"

#include <cstdlib>
#include <filesystem>

namespace schedc::runtime {

std::string cuda_include_dir() {
  namespace fs = std::filesystem;
  auto holds_headers = [](const std::string& dir) {
    std::error_code ec;
    return !dir.empty() && fs::exists(fs::path(dir) / "cuda_runtime.h", ec);
  };
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(var);
    if (root && *root && holds_headers(std::string(root) + "/include"))
      return std::string(root) + "/include";
  }
  std::string built_with = SCHEDC_CUDA_INCLUDE_DIR;
  // CMake may give a list; take the first entry.
  built_with = built_with.substr(0, built_with.find(';'));
  return holds_headers(built_with) ? built_with : "";
}

}  // namespace schedc::runtime
