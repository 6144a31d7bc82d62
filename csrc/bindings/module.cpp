#include "prelude.hpp"

void register_graph(py::module_& m);
void register_ppr(py::module_& m);
void register_suggest(py::module_& m);
void register_path(py::module_& m);
void register_walk(py::module_& m);
void register_text(py::module_& m);
void register_context(py::module_& m);
void register_snapshot(py::module_& m);
void register_vectors(py::module_& m);

#define CW_STR(x) #x
#define CW_XSTR(x) CW_STR(x)

PYBIND11_MODULE(_core, m) {
  m.doc() = "conceptwalk compiled core: CSR graph, forward-push PPR, resource allocation, BFS, typed walk";
#ifdef VERSION_INFO
  m.attr("__version__") = CW_XSTR(VERSION_INFO);
#else
  m.attr("__version__") = "dev";
#endif
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cw::NodeOutOfRange& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const cw::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  register_graph(m);
  register_ppr(m);
  register_suggest(m);
  register_path(m);
  register_walk(m);
  register_text(m);
  register_context(m);
  register_snapshot(m);
  register_vectors(m);
}
