// Bindings for snapshots: a CSRGraph from saved arrays (validated in the core).
#include "prelude.hpp"

void register_snapshot(py::module_& m) {
  m.def(
      "csr_graph_from_arrays",
      [](std::int64_t num_nodes, std::int64_t num_edge_types, const carray<std::int64_t>& indptr,
         const carray<std::int32_t>& indices, const carray<std::int32_t>& pair_base,
         const carray<std::int32_t>& pair_ptr, const carray<std::int32_t>& edge_typedir,
         const py::tuple& originals) {
        if (num_nodes < 0 || num_nodes > 0x7fffffffLL)
          throw py::value_error("num_nodes must be in [0, 2^31), got " + std::to_string(num_nodes));
        if (num_edge_types < 0 || num_edge_types > (1LL << 29))
          throw py::value_error("num_edge_types must be in [0, 2^29], got " + std::to_string(num_edge_types));
        check_1d(indptr, "indptr", num_nodes + 1);
        check_1d(indices, "indices");
        check_1d(pair_base, "pair_base", num_nodes + 1);
        check_1d(pair_ptr, "pair_ptr");
        check_1d(edge_typedir, "edge_typedir");
        if (pair_ptr.shape(0) < 1) throw py::value_error("pair_ptr must have length >= 1");
        auto g = std::make_shared<cw::CSRGraph>();
        const std::int64_t* ip = indptr.data();
        const std::int32_t* ind = indices.data();
        const std::int32_t* pb = pair_base.data();
        const std::int32_t* pp = pair_ptr.data();
        const std::int32_t* td = edge_typedir.data();
        const std::int64_t entries = indices.shape(0), pairs = pair_ptr.shape(0) - 1,
                           edges = edge_typedir.shape(0);
        std::shared_ptr<const void> keep =
            borrow_keeper(originals, indptr, indices, pair_base, pair_ptr, edge_typedir);  // or copy
        {
          Nogil nogil;
          *g = cw::CSRGraph::from_parts(static_cast<cw::node_t>(num_nodes),
                                        static_cast<std::int32_t>(num_edge_types), ip, entries, ind, pb, pairs, pp,
                                        edges, td, keep);
        }
        return g;
      },
      "num_nodes"_a, "num_edge_types"_a, "indptr"_a, "indices"_a, "pair_base"_a, "pair_ptr"_a, "edge_typedir"_a,
      "borrow"_a = py::tuple(),
      "A CSRGraph from the arrays of an earlier build (indptr, indices, pair_base, pair_ptr, "
      "edge_typedir) after validating every invariant; ValueError on inconsistent arrays. Copied, "
      "unless `borrow` is the tuple of the five arrays given and each is read-only, aligned, C-contiguous, "
      "of the right dtype and over memory no Python code can change (a read-only mmap, bytes): then the "
      "graph keeps them (no copy; a memory-mapped file's pages are shared by every process that maps it).");
}
