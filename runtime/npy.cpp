#include "runtime/npy.h"

#include <cstring>
#include <fstream>

namespace schedc::runtime {

namespace {

// '<f4' for float, '<i4' for int32_t: both 4 bytes, little-endian.
template <typename T>
const char* npy_descr();
template <>
const char* npy_descr<float>() {
  return "<f4";
}
template <>
const char* npy_descr<int32_t>() {
  return "<i4";
}

template <typename T>
std::string npy_bytes_of(const std::vector<T>& data, int64_t rows, int64_t cols, int64_t ld,
                         int64_t batch, int64_t stride) {
  const std::string shape = (batch > 1 ? std::to_string(batch) + ", " : "") + std::to_string(rows) +
                            ", " + std::to_string(cols);
  std::string header = std::string("{'descr': '") + npy_descr<T>() +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(char(header.size() & 0xff));
  out.push_back(char((header.size() >> 8) & 0xff));
  out += header;
  out.reserve(out.size() + size_t(batch * rows * cols) * sizeof(T));
  for (int64_t g = 0; g < batch; ++g)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        T v = data[size_t(g * stride + i * ld + j)];
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));  // schedc's hosts are little-endian (x86-64, aarch64)
        out.append(b, sizeof(T));
      }
  return out;
}

bool write_file(const std::string& path, const std::string& bytes, std::string& why) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) {
    why = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace

std::string npy_bytes(const std::vector<float>& data, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batch, int64_t stride) {
  return npy_bytes_of(data, rows, cols, ld, batch, stride);
}

std::string npy_bytes(const std::vector<int32_t>& data, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batch, int64_t stride) {
  return npy_bytes_of(data, rows, cols, ld, batch, stride);
}

bool write_npy(const std::string& path, const std::vector<float>& data, int64_t rows, int64_t cols,
               int64_t ld, std::string& why, int64_t batch, int64_t stride) {
  return write_file(path, npy_bytes(data, rows, cols, ld, batch, stride), why);
}

bool write_npy(const std::string& path, const std::vector<int32_t>& data, int64_t rows,
               int64_t cols, int64_t ld, std::string& why, int64_t batch, int64_t stride) {
  return write_file(path, npy_bytes(data, rows, cols, ld, batch, stride), why);
}

}  // namespace schedc::runtime
