#pragma once
#include <string>
namespace schedc::runtime {
// The CUDA include directory NVRTC needs for <mma.h> and friends:
// $CUDA_HOME/include, then $CUDA_PATH/include, then the toolkit schedc was
// built with. Returns "" when none of them holds cuda_runtime.h.
std::string cuda_include_dir();
}  // namespace schedc::runtime
