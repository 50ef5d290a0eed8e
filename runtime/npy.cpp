#include "runtime/npy.h"

#include <cstring>
#include <fstream>

namespace schedc::runtime {

std::string npy_bytes(const std::vector<float>& data, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batch, int64_t stride) {
  const std::string shape = (batch > 1 ? std::to_string(batch) + ", " : "") + std::to_string(rows) +
                            ", " + std::to_string(cols);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(char(header.size() & 0xff));
  out.push_back(char((header.size() >> 8) & 0xff));
  out += header;
  out.reserve(out.size() + size_t(batch * rows * cols) * 4);
  for (int64_t g = 0; g < batch; ++g)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        float v = data[size_t(g * stride + i * ld + j)];
        char b[4];
        std::memcpy(b, &v, 4);  // schedc's hosts are little-endian (x86-64, aarch64)
        out.append(b, 4);
      }
  return out;
}

bool write_npy(const std::string& path, const std::vector<float>& data, int64_t rows, int64_t cols,
               int64_t ld, std::string& why, int64_t batch, int64_t stride) {
  std::string bytes = npy_bytes(data, rows, cols, ld, batch, stride);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) {
    why = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace schedc::runtime
