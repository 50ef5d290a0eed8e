// The Python extension `schedc._schedc`: the C++ API (include/schedc/schedc.h)
// bound with nanobind. python/schedc/__init__.py builds the Python interface
// (exceptions, tensors) on top of it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <iterator>
#include <string>

#include "schedc/schedc.h"

namespace nb = nanobind;

NB_MODULE(_schedc, m) {
  m.doc() = "schedc's C++ API (include/schedc/schedc.h); use the schedc package";

  nb::class_<schedc::SourceLocation>(m, "SourceLocation")
      .def_ro("file", &schedc::SourceLocation::file)
      .def_ro("line", &schedc::SourceLocation::line)
      .def_ro("column", &schedc::SourceLocation::column)
      .def_ro("length", &schedc::SourceLocation::length);
  nb::class_<schedc::DiagnosticNote>(m, "DiagnosticNote")
      .def_ro("where", &schedc::DiagnosticNote::where)
      .def_ro("message", &schedc::DiagnosticNote::message);
  nb::class_<schedc::Diagnostic>(m, "Diagnostic")
      .def_prop_ro("severity",
                   [](const schedc::Diagnostic& d) {
                     return d.severity == schedc::Diagnostic::Severity::warning ? "warning"
                                                                                : "error";
                   })
      .def_ro("where", &schedc::Diagnostic::where)
      .def_ro("message", &schedc::Diagnostic::message)
      .def_ro("notes", &schedc::Diagnostic::notes);

  // ConvGeometry's fields (each an int64_t), and their names in Python: the C++ ones.
  using G = schedc::ConvGeometry;
  static int64_t G::*const kFields[] = {
      &G::n,        &G::h,        &G::w,     &G::c,     &G::k,          &G::r,         &G::s,
      &G::stride_h, &G::stride_w, &G::pad_h, &G::pad_w, &G::dilation_h, &G::dilation_w};
  static const char* const kFieldNames[] = {"n",     "h",          "w",         "c",        "k",
                                            "r",     "s",          "stride_h",  "stride_w", "pad_h",
                                            "pad_w", "dilation_h", "dilation_w"};
  static_assert(std::size(kFields) == std::size(kFieldNames));
  nb::class_<G> geometry(m, "ConvGeometry");
  geometry.def(nb::init<>())
      .def("p", &G::p, "The output's height")
      .def("q", &G::q, "The output's width")
      .def("__repr__", [](const G& g) {
        std::string out;
        for (size_t i = 0; i < std::size(kFields); ++i)
          out += std::string(i ? ", " : "") + kFieldNames[i] + "=" + std::to_string(g.*kFields[i]);
        return "ConvGeometry(" + out + ")";
      });
  for (size_t i = 0; i < std::size(kFields); ++i) geometry.def_rw(kFieldNames[i], kFields[i]);

  nb::class_<schedc::Kernel>(m, "Kernel")
      .def_prop_ro("schedule_text", &schedc::Kernel::schedule_text)
      .def_prop_ro("cuda_source", &schedc::Kernel::cuda_source)
      .def_prop_ro("entry_name", &schedc::Kernel::entry_name)
      .def_prop_ro("dtype", &schedc::Kernel::dtype)
      .def_prop_ro("c_dtype", &schedc::Kernel::c_dtype)
      .def_prop_ro("takes_scale", &schedc::Kernel::takes_scale)
      .def_prop_ro("arch", &schedc::Kernel::arch)
      .def_prop_ro("layout", &schedc::Kernel::layout)
      .def_prop_ro("block_threads", &schedc::Kernel::block_threads)
      .def_prop_ro("shared_memory_bytes", &schedc::Kernel::shared_memory_bytes)
      .def(
          "launch",
          [](const schedc::Kernel& k, int64_t m, int64_t n, int64_t kk, uintptr_t a, int64_t lda,
             uintptr_t b, int64_t ldb, uintptr_t c, int64_t ldc, float alpha, float beta,
             uintptr_t bias, uintptr_t scale, uintptr_t stream) {
            schedc::Gemm g{m,    n,
                           kk,   reinterpret_cast<const void*>(a),
                           lda,  reinterpret_cast<const void*>(b),
                           ldb,  reinterpret_cast<void*>(c),
                           ldc,  alpha,
                           beta, reinterpret_cast<const float*>(bias)};
            g.scale = reinterpret_cast<const float*>(scale);
            nb::gil_scoped_release release;
            k.launch(g, reinterpret_cast<void*>(stream));
          },
          nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("a"), nb::arg("lda"), nb::arg("b"),
          nb::arg("ldb"), nb::arg("c"), nb::arg("ldc"), nb::arg("alpha"), nb::arg("beta"),
          nb::arg("bias"), nb::arg("scale"), nb::arg("stream"),
          "Launches on raw device pointers (integers) and a cudaStream_t (0: the default stream)")
      .def_prop_ro("is_convolution", &schedc::Kernel::is_convolution)
      .def_prop_ro("convolution", &schedc::Kernel::convolution)
      .def_prop_ro("convolution_layout", &schedc::Kernel::convolution_layout)
      .def(
          "launch_conv",
          [](const schedc::Kernel& k, const G& geometry, uintptr_t x, uintptr_t w, uintptr_t y,
             float alpha, float beta, uintptr_t bias, uintptr_t scale, uintptr_t stream) {
            schedc::Conv conv{geometry,
                              reinterpret_cast<const void*>(x),
                              reinterpret_cast<const void*>(w),
                              reinterpret_cast<void*>(y),
                              alpha,
                              beta,
                              reinterpret_cast<const float*>(bias)};
            conv.scale = reinterpret_cast<const float*>(scale);
            nb::gil_scoped_release release;
            k.launch(conv, reinterpret_cast<void*>(stream));
          },
          nb::arg("geometry"), nb::arg("x"), nb::arg("w"), nb::arg("y"), nb::arg("alpha"),
          nb::arg("beta"), nb::arg("bias"), nb::arg("scale"), nb::arg("stream"),
          "Launches a convolution on raw device pointers (integers), in the module's layout "
          "(NHWC or NCHW32), and a cudaStream_t");

  nb::class_<schedc::CompileResult>(m, "CompileResult")
      .def_prop_ro("kernel",
                   [](const schedc::CompileResult& r) {
                     return std::const_pointer_cast<schedc::Kernel>(r.kernel);
                   })
      .def_ro("diagnostics", &schedc::CompileResult::diagnostics)
      .def_ro("rendered", &schedc::CompileResult::rendered)
      .def_prop_ro("ok", &schedc::CompileResult::ok);

  m.def(
      "compile",
      [](std::string_view text, const std::string& arch, const std::string& file_name) {
        schedc::CompileOptions o;
        o.arch = arch;
        o.file_name = file_name;
        return schedc::compile(text, o);
      },
      nb::arg("text"), nb::arg("arch"), nb::arg("file_name"));
  m.def(
      "compile_file",
      [](const std::string& path, const std::string& arch) {
        schedc::CompileOptions o;
        o.arch = arch;
        return schedc::compile_file(path, o);
      },
      nb::arg("path"), nb::arg("arch"));
  m.def("version", &schedc::version);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const schedc::ArgumentError& e) {  // the caller's mistake, found before the launch
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const schedc::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}
