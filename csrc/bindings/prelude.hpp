// First include of every binding file.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/live_graph.hpp"
#include "conceptwalk/text_index.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

// The GIL released around a core call, as py::gil_scoped_release, but with a destructor that may
// throw. At interpreter exit CPython ends a daemon thread that asks for the GIL back with
// pthread_exit, a forced unwind; through gil_scoped_release's destructor (noexcept, as every
// destructor by default) that unwind is std::terminate, and the whole process aborts ("terminate
// called without an active exception"; a program whose daemon threads query the core aborted
// at every exit). Through this one it goes on up (pybind11's dispatcher rethrows
// abi::__forced_unwind) and ends the thread as CPython means it to.
class Nogil {
 public:
  Nogil() : state_(PyEval_SaveThread()) {}
  ~Nogil() noexcept(false) { PyEval_RestoreThread(state_); }
  Nogil(const Nogil&) = delete;
  Nogil& operator=(const Nogil&) = delete;

 private:
  PyThreadState* state_;
};

// An array argument as the core reads it: C-contiguous, of type T (converted when needed) and
// aligned for T (a misaligned buffer, e.g. an ndarray at an odd offset into bytes, is copied by
// NumPy first: the core never loads a T from a misaligned address).
template <class T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast | py::detail::npy_api::NPY_ARRAY_ALIGNED_>;

// Moves a vector to the heap and exposes it as a 1-D numpy array without copying.
template <class T>
py::array_t<T> vector_to_array(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(heap->size())}, {sizeof(T)}, heap->data(), owner);
}

// A read-only 1-D view of memory owned by `base` (no copy; the flag is cleared directly, not
// through a Python-level setflags call).
template <class T>
py::array_t<T> readonly_view(const T* data, std::int64_t size, py::handle base) {
  py::array_t<T> a({static_cast<py::ssize_t>(size)}, {sizeof(T)}, data, base);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// A read-only property of a bound result struct S exposing the vector member as a numpy view
// whose base is the Python result object (no copy; the view keeps the result alive).
template <class S, class T>
auto vector_property(std::vector<T> S::*member) {
  return [member](py::object self) {
    const std::vector<T>& v = self.cast<const S&>().*member;
    return readonly_view(v.data(), static_cast<std::int64_t>(v.size()), self);
  };
}

// The same for a class whose vector is read through a const accessor.
template <class S, class T>
auto vector_property(const std::vector<T>& (S::*getter)() const) {
  return [getter](py::object self) {
    const std::vector<T>& v = (self.cast<const S&>().*getter)();
    return readonly_view(v.data(), static_cast<std::int64_t>(v.size()), self);
  };
}

// A vector<uint8_t> of 0/1 flags as a read-only bool view.
template <class S>
auto flag_property(std::vector<std::uint8_t> S::*member) {
  return [member](py::object self) {
    const std::vector<std::uint8_t>& v = self.cast<const S&>().*member;
    return readonly_view(reinterpret_cast<const bool*>(v.data()), static_cast<std::int64_t>(v.size()), self);
  };
}

// A node-index array argument as int32, refusing what a cast would silently change: a dtype
// that is not an integer (2.7 would become node 2) and integers that int32 cannot hold
// (2**32 + 2 would become node 2) -- the range is checked before any cast. Empty inputs of any
// dtype are an empty array.
inline carray<std::int32_t> node_array(py::handle obj, const cw::GraphRef& g, const char* name) {
  if (obj.is_none()) throw py::type_error(std::string(name) + " must be an array of node indices, got None");
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error(std::string(name) + " must be an array of node indices");
  if (a.size() == 0) return carray<std::int32_t>::ensure(a);
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error(std::string(name) + " must hold integer node indices, got dtype " +
                         std::string(py::str(a.dtype())));
  const auto size = static_cast<std::int64_t>(a.itemsize());
  if ((kind == 'i' && size <= 4) || (kind == 'u' && size <= 2)) return carray<std::int32_t>::ensure(a);
  auto bad = [&](const std::string& v) {
    return cw::NodeOutOfRange(std::string(name) + ": node index " + v + " outside [0, " +
                              std::to_string(g.num_nodes()) + ")");
  };
  if (kind == 'u') {
    auto u = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    const std::uint64_t* d = u.data();
    for (py::ssize_t i = 0; i < u.size(); ++i)
      if (d[i] > 0x7fffffffULL) throw bad(std::to_string(d[i]));
  } else {
    auto s = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    const std::int64_t* d = s.data();
    for (py::ssize_t i = 0; i < s.size(); ++i)
      if (d[i] < INT32_MIN || d[i] > INT32_MAX) throw bad(std::to_string(d[i]));
  }
  return carray<std::int32_t>::ensure(a);
}

// A node index scalar: int64 from Python, checked to fit a node index before the narrowing.
inline cw::node_t node_scalar(std::int64_t x, const cw::GraphRef& g, const char* what) {
  if (x < 0 || x >= g.num_nodes())
    throw cw::NodeOutOfRange(std::string(what) + " index " + std::to_string(x) + " outside [0, " +
                             std::to_string(g.num_nodes()) + ")");
  return static_cast<cw::node_t>(x);
}

// Checks a 1-D array's length, naming the argument.
template <class A>
void check_1d(const A& a, const char* name, py::ssize_t expected = -1) {
  if (a.ndim() != 1)
    throw py::value_error(std::string(name) + " must be 1-dimensional, got " + std::to_string(a.ndim()) +
                          " dimensions");
  if (expected >= 0 && a.shape(0) != expected)
    throw py::value_error(std::string(name) + " must have length " + std::to_string(expected) + ", got " +
                          std::to_string(a.shape(0)));
}

// Whether no Python code can change the memory under array `a`: its chain of bases (arrays,
// memoryviews) ends in an object that gives no writable buffer (a read-only mmap, bytes, the core
// object whose arrays another one exposes read-only) -- numpy's own rule for whether a read-only
// view may be made writable again. An array that owns its memory does not qualify even when
// read-only: its flag can be set back.
inline bool immutable_memory(py::handle a) {
  py::object o = py::reinterpret_borrow<py::object>(a);
  for (int depth = 0; depth < 64; ++depth) {
    if (py::isinstance<py::array>(o)) {
      py::object base = o.attr("base");
      if (base.is_none()) return false;
      o = base;
    } else if (PyMemoryView_Check(o.ptr())) {
      py::object inner = o.attr("obj");
      if (inner.is_none()) return false;
      o = inner;
    } else {
      Py_buffer view;
      if (PyObject_GetBuffer(o.ptr(), &view, PyBUF_WRITABLE) == 0) {
        PyBuffer_Release(&view);
        return false;  // writable
      }
      PyErr_Clear();
      return true;  // a read-only buffer, or none to write through
    }
  }
  return false;
}

// What keeps borrowed arrays alive: the tuple `borrow`, when it names exactly `arrays`, in order --
// these very objects, the caller's own arrays, not converted temporaries (a carray is aligned) --
// each read-only and over memory no Python code can change (`immutable_memory`: a mapped file
// opened read-only); else null (copy them: a later write to the caller's memory cannot reach what
// was validated). Released under the GIL, whichever thread drops the last reference.
template <class... A>
std::shared_ptr<const void> borrow_keeper(const py::tuple& borrow, const A&... arrays) {
  if (borrow.size() != sizeof...(A)) return nullptr;
  std::size_t i = 0;
  const bool ok = ((borrow[i++].ptr() == arrays.ptr() && !arrays.writeable() && immutable_memory(arrays)) && ...);
  if (!ok) return nullptr;
  auto* held = new py::tuple(borrow);
  return std::shared_ptr<const void>(held, [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::tuple*>(p);
  });
}

// A caller's visibility: the byte mask and visible degrees, owned, computed once.
struct VisibilityMask {
  std::shared_ptr<const cw::CSRGraph> graph;
  std::vector<std::uint8_t> mask;
  std::vector<std::int32_t> vdeg;
  std::vector<cw::offset_t> vindptr;  // rows of the visible subgraph (see cw::Visibility)
  cw::RawVector<cw::node_t> vindices;
  std::int64_t visible_count = 0;
  cw::Visibility view() const { return cw::Visibility{mask.data(), vdeg.data(), vindptr.data(), vindices.data()}; }
};

// A live store's graph (issue 31): a base CSRGraph and the delta over it (cw::GraphDelta). The base
// is shared, never copied; the delta is immutable.
struct LiveGraph {
  std::shared_ptr<const cw::CSRGraph> base;
  std::shared_ptr<const cw::GraphDelta> delta;
  // Base plus delta; refuses an object that LiveGraph.grow did not make (LiveGraph.__new__).
  cw::GraphRef ref() const {
    if (!base || !delta) throw py::value_error("an uninitialised LiveGraph: make one with LiveGraph.grow");
    return cw::GraphRef(*base, delta.get());
  }
};

// A caller's visibility of a LiveGraph: the base's VisibilityMask (kept alive) and the delta's
// part (cw::DeltaVisibility: the new slots' mask and visible degrees, the grown base rows' visible
// degrees), made once per (live graph, caller) in O(delta entries).
struct LiveVisibility {
  py::object live_obj;  // the LiveGraph it is for (kept alive)
  const LiveGraph* live = nullptr;
  py::object base_obj;  // the base's VisibilityMask (kept alive)
  const VisibilityMask* base = nullptr;
  std::vector<std::uint8_t> slot_mask;
  std::vector<std::int32_t> slot_vdeg, over_vdeg;
  cw::DeltaVisibility dv;
  std::int64_t visible_count = 0;
  cw::Visibility view() const {
    cw::Visibility v{base->mask.data(), base->vdeg.data(), nullptr, nullptr};
    v.delta = &dv;
    return v;
  }
};

// The delta of an initialised LiveGraph (ValueError otherwise).
inline const cw::GraphDelta* live_delta(const LiveGraph& g) {
  (void)g.ref();
  return g.delta.get();
}

// The `visible` argument of an entry point over a LiveGraph: None (all access) or the
// LiveVisibility made for it.
inline cw::Visibility live_visibility(const LiveGraph& g, py::handle visible) {
  (void)g.ref();  // initialised
  if (visible.is_none()) return cw::Visibility{};
  if (!py::isinstance<LiveVisibility>(visible))
    throw py::value_error("visible: a LiveGraph takes a LiveVisibility made for it (or None: all access)");
  const auto* lv = visible.cast<const LiveVisibility*>();
  if (lv->live != &g) throw py::value_error("visible: the LiveVisibility was made for another LiveGraph");
  return lv->view();
}

// The `visible` argument of an entry point: None or a VisibilityMask. Taken as a handle and cast
// here, because pybind11 refuses None for a class pointer in its first (no-conversion) overload
// pass and then converts every argument again: about 1 us per call spent on nothing.
inline const VisibilityMask* mask_arg(py::handle h) {
  if (h.is_none()) return nullptr;
  if (!py::isinstance<VisibilityMask>(h))
    throw py::type_error(std::string("visible must be a VisibilityMask or None, got ") +
                         std::string(py::str(py::type::handle_of(h).attr("__name__"))));
  return h.cast<const VisibilityMask*>();
}

// Resolves an optional VisibilityMask for graph g (None = all visible).
inline cw::Visibility resolve_visibility(const cw::CSRGraph& g, const VisibilityMask* vm) {
  if (!vm) return cw::Visibility{};
  if (vm->graph.get() != &g) throw py::value_error("visible: the VisibilityMask was built for a different graph");
  return vm->view();
}

// Node ids resolved inside a binding call (issue 18): the graph's id index (an IdIndex or a dict,
// anything with __getitem__) is passed in, so an id-level answer is one call from Python.
// The node index of `id` when it is an exact str the index maps to a node visible under `vis`;
// -1 otherwise (missing, hidden, not a str, or an index value that is not a node of g). The
// caller then takes the Python path, which raises the one NotFoundError text for every such case
// (the fast path never decides an error itself). Errors other than KeyError propagate.
inline cw::node_t lookup_visible_id(py::handle index, py::handle id, const cw::CSRGraph& g,
                                    const cw::Visibility& vis) {
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

using TextIndexPtr = std::shared_ptr<cw::TextIndex>;

// BM25 statistics over one visible set, tied to the index they were computed for.
struct TextStatsHolder {
  TextIndexPtr index;
  cw::TextStats stats;
};
