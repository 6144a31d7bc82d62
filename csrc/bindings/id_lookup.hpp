// Node ids resolved inside a binding call (issue 18): the graph's id index (an IdIndex or a dict,
// anything with __getitem__) is passed in, so an id-level answer is one call from Python.
#pragma once
#include "prelude.hpp"

// The node index of `id` when it is an exact str the index maps to a node visible under `vis`;
// -1 otherwise (missing, hidden, not a str, or an index value that is not a node of g). The
// caller then takes the Python path, which raises the one NotFoundError text for every such case
// (the fast path never decides an error itself). Errors other than KeyError propagate.
inline cw::node_t lookup_visible_id(py::handle index, py::handle id, const cw::CSRGraph& g, const cw::Visibility& vis) {
  if (!PyUnicode_CheckExact(id.ptr())) return -1;
  PyObject* v = PyObject_GetItem(index.ptr(), id.ptr());
  if (v == nullptr) {
    if (PyErr_ExceptionMatches(PyExc_KeyError)) {
      PyErr_Clear();
      return -1;
    }
    throw py::error_already_set();
  }
  int overflow = 0;
  const long long x = PyLong_Check(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : -1;
  Py_DECREF(v);
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || x < 0 || x >= g.num_nodes()) return -1;
  const auto u = static_cast<cw::node_t>(x);
  if (!cw::CSRGraph::visible(u, vis)) return -1;
  return u;
}

// seq[i] (i >= 0) as a new reference: a list's or tuple's item directly, anything else (or an index
// past the end, which then raises IndexError) through the sequence protocol.
inline py::object seq_item(py::handle seq, Py_ssize_t i) {
  if (PyList_CheckExact(seq.ptr()) && i < PyList_GET_SIZE(seq.ptr()))
    return py::reinterpret_borrow<py::object>(PyList_GET_ITEM(seq.ptr(), i));
  if (PyTuple_CheckExact(seq.ptr()) && i < PyTuple_GET_SIZE(seq.ptr()))
    return py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(seq.ptr(), i));
  PyObject* o = PySequence_GetItem(seq.ptr(), i);
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

// A Python list of ints from node indices.
template <class T>
py::list int_list(const T* data, std::size_t n) {
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(n));
  if (out == nullptr) throw py::error_already_set();
  py::list l = py::reinterpret_steal<py::list>(out);
  for (std::size_t i = 0; i < n; ++i) {
    PyObject* x = PyLong_FromLongLong(static_cast<long long>(data[i]));
    if (x == nullptr) throw py::error_already_set();
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), x);
  }
  return l;
}
