// First include of every binding file.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

template <class T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

// Moves a vector to the heap and exposes it as a 1-D numpy array without copying.
template <class T>
py::array_t<T> vector_to_array(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(heap->size())}, {sizeof(T)}, heap->data(), owner);
}

// A read-only 1-D view of memory owned by `base`.
template <class T>
py::array_t<T> readonly_view(const T* data, std::int64_t size, py::handle base) {
  py::array_t<T> a({static_cast<py::ssize_t>(size)}, {sizeof(T)}, data, base);
  a.attr("setflags")("write"_a = false);
  return a;
}

// Checks a 1-D array's length, naming the argument.
template <class A>
void check_1d(const A& a, const char* name, py::ssize_t expected = -1) {
  if (a.ndim() != 1)
    throw py::value_error(std::string(name) + " must be 1-dimensional, got " +
                          std::to_string(a.ndim()) + " dimensions");
  if (expected >= 0 && a.shape(0) != expected)
    throw py::value_error(std::string(name) + " must have length " + std::to_string(expected) +
                          ", got " + std::to_string(a.shape(0)));
}

// A caller's visibility: the byte mask and visible degrees, owned, computed once.
struct VisibilityMask {
  std::shared_ptr<const cw::CSRGraph> graph;
  std::vector<std::uint8_t> mask;
  std::vector<std::int32_t> vdeg;
  std::vector<cw::offset_t> vindptr;  // rows of the visible subgraph (see cw::Visibility)
  cw::RawVector<cw::node_t> vindices;
  std::int64_t visible_count = 0;
  cw::Visibility view() const {
    return cw::Visibility{mask.data(), vdeg.data(), vindptr.data(), vindices.data()};
  }
};

// Resolves an optional VisibilityMask for graph g (None = all visible).
inline cw::Visibility resolve_visibility(const cw::CSRGraph& g, const VisibilityMask* vm) {
  if (!vm) return cw::Visibility{};
  if (vm->graph.get() != &g)
    throw py::value_error("visible: the VisibilityMask was built for a different graph");
  return vm->view();
}
