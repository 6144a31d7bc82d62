#include "prelude.hpp"

#include <algorithm>

void register_graph(py::module_& m) {
  py::class_<cw::CSRGraph, std::shared_ptr<cw::CSRGraph>>(
      m, "CSRGraph", "Immutable CSR of the undirected projection of a typed directed edge list.")
      .def_static(
          "from_edges",
          [](std::int64_t num_nodes, const carray<std::int32_t>& src, const carray<std::int32_t>& dst,
             const carray<std::int32_t>& etype) {
            check_1d(src, "src");
            check_1d(dst, "dst", src.shape(0));
            check_1d(etype, "etype", src.shape(0));
            if (num_nodes < 0 || num_nodes > 0x7fffffffLL)
              throw py::value_error("num_nodes must be in [0, 2^31), got " + std::to_string(num_nodes));
            const std::int64_t m = src.shape(0);
            py::array_t<std::int64_t> canon(m);
            auto g = std::make_shared<cw::CSRGraph>();
            {
              const std::int32_t* s = src.data();
              const std::int32_t* d = dst.data();
              const std::int32_t* t = etype.data();
              std::int64_t* c = canon.mutable_data();
              Nogil nogil;
              *g = cw::CSRGraph::build(static_cast<cw::node_t>(num_nodes), m, s, d, t, c);
            }
            return py::make_tuple(g, canon);
          },
          "num_nodes"_a, "src"_a, "dst"_a, "etype"_a,
          "Build from directed typed edges; returns (graph, input_to_canonical edge ids).")
      .def_static(
          "patched",
          [](const cw::CSRGraph& old, std::int64_t num_nodes, const carray<std::int32_t>& remap,
             const carray<std::int32_t>& type_lut, const carray<std::int64_t>& drop,
             const carray<std::int32_t>& add_src, const carray<std::int32_t>& add_dst,
             const carray<std::int32_t>& add_type, std::int64_t min_num_types) {
            check_1d(remap, "remap", old.num_nodes());
            check_1d(type_lut, "type_lut");
            check_1d(drop, "drop");
            check_1d(add_src, "add_src");
            check_1d(add_dst, "add_dst", add_src.shape(0));
            check_1d(add_type, "add_type", add_src.shape(0));
            if (num_nodes < 0 || num_nodes > 0x7fffffffLL)
              throw py::value_error("num_nodes must be in [0, 2^31), got " + std::to_string(num_nodes));
            if (type_lut.shape(0) > (1 << 29)) throw py::value_error("type_lut is longer than 2^29");
            if (min_num_types < 0 || min_num_types > (1 << 29))
              throw py::value_error("min_num_types must be in [0, 2^29], got " + std::to_string(min_num_types));
            const std::int64_t m = add_src.shape(0);
            py::array_t<std::int64_t> add_canon(m);
            const py::ssize_t cap = static_cast<py::ssize_t>(old.num_edges() + m);
            py::array_t<std::int32_t> e_src(cap), e_dst(cap), e_type(cap);
            py::array_t<std::int32_t> new_to_old(cap);
            auto g = std::make_shared<cw::CSRGraph>();
            {
              const std::int32_t* r = remap.data();
              const std::int32_t* tl = type_lut.data();
              const std::int64_t* dr = drop.data();
              const std::int32_t* s = add_src.data();
              const std::int32_t* d = add_dst.data();
              const std::int32_t* t = add_type.data();
              std::int64_t* ac = add_canon.mutable_data();
              const auto nt = static_cast<std::int32_t>(type_lut.shape(0));
              const auto nd = static_cast<std::int64_t>(drop.shape(0));
              cw::PatchedEdges pe{e_src.mutable_data(), e_dst.mutable_data(), e_type.mutable_data(),
                                  new_to_old.mutable_data()};
              Nogil nogil;
              *g = cw::CSRGraph::patched(old, static_cast<cw::node_t>(num_nodes), r, nt, tl, nd, dr, m, s, d, t,
                                         static_cast<std::int32_t>(min_num_types), ac, pe);
            }
            const py::ssize_t E = static_cast<py::ssize_t>(g->num_edges());
            py::slice head(0, E, 1);
            return py::make_tuple(g, add_canon, e_src[head], e_dst[head], e_type[head], new_to_old[head]);
          },
          "old"_a, "num_nodes"_a, "remap"_a, "type_lut"_a, "drop"_a, "add_src"_a, "add_dst"_a, "add_type"_a,
          "min_num_types"_a = 0,
          "The graph a fresh build gives after renumbering the nodes (remap: old -> new index or "
          "-1, strictly increasing over kept nodes), recoding edge types (type_lut: old -> new code "
          "or -1, strictly increasing), dropping old canonical edges (ascending ids) and adding "
          "edges; returns (graph, the added edges' canonical ids (-1 self-loop), and per new "
          "canonical edge its src, dst, type code and old id (-1 added)). O(n + entries), no sort "
          "of the old edges.")
      .def_property_readonly("num_nodes", &cw::CSRGraph::num_nodes)
      .def_property_readonly("num_entries", &cw::CSRGraph::num_entries)
      .def_property_readonly("num_pairs", &cw::CSRGraph::num_pairs)
      .def_property_readonly("num_edges", &cw::CSRGraph::num_edges)
      .def_property_readonly("num_edge_types", &cw::CSRGraph::num_edge_types)
      .def_property_readonly("max_degree", &cw::CSRGraph::max_degree)
      .def_property_readonly("memory_bytes", &cw::CSRGraph::memory_bytes)
      .def_property_readonly("borrowed", &cw::CSRGraph::borrowed,
                             "True when the arrays are borrowed (e.g. mapped from a snapshot file), not copied.")
      .def_property_readonly("indptr",
                             [](py::object self) {
                               const auto& g = self.cast<const cw::CSRGraph&>();
                               return readonly_view(g.indptr(), g.num_nodes() + 1, self);
                             })
      .def_property_readonly("indices",
                             [](py::object self) {
                               const auto& g = self.cast<const cw::CSRGraph&>();
                               return readonly_view(g.indices(), g.num_entries(), self);
                             })
      .def(
          "edge_columns",
          [](const cw::CSRGraph& g) {
            const py::ssize_t E = static_cast<py::ssize_t>(g.num_edges());
            py::array_t<std::int32_t> src(E), dst(E), type(E);
            {
              std::int32_t* s = src.mutable_data();
              std::int32_t* d = dst.mutable_data();
              std::int32_t* t = type.mutable_data();
              Nogil nogil;
              g.edge_columns(s, d, t);
            }
            return py::make_tuple(src, dst, type);
          },
          "Per canonical edge the (src, dst, type code) it was given as: three int32 arrays, O(edges).")
      .def_property_readonly("entry_pair",
                             [](const cw::CSRGraph& g) {
                               // Not stored (4 bytes per entry): computed on each access in O(entries). Per entry,
                               // use pair_of(u, v) or pair_base.
                               py::array_t<std::int32_t> out(g.num_entries());
                               {
                                 std::int32_t* o = out.mutable_data();
                                 Nogil nogil;
                                 g.entry_pairs(o);
                               }
                               out.attr("setflags")("write"_a = false);
                               return out;
                             })
      .def_property_readonly("pair_base",
                             [](py::object self) {
                               const auto& g = self.cast<const cw::CSRGraph&>();
                               return readonly_view(g.pair_base(), g.num_nodes() + 1, self);
                             })
      .def(
          "pair_of",
          [](const cw::CSRGraph& g, std::int64_t u, std::int64_t v) -> std::int64_t {
            if (u < 0 || u >= g.num_nodes() || v < 0 || v >= g.num_nodes())
              throw py::index_error("node index outside [0, " + std::to_string(g.num_nodes()) + ")");
            return g.pair_of(static_cast<cw::node_t>(u), static_cast<cw::node_t>(v));
          },
          "u"_a, "v"_a, "Pair (index into pair_ptr) joining nodes u and v, or -1 when not adjacent.")
      .def_property_readonly("pair_ptr",
                             [](py::object self) {
                               const auto& g = self.cast<const cw::CSRGraph&>();
                               return readonly_view(g.pair_ptr(), g.num_pairs() + 1, self);
                             })
      .def_property_readonly("edge_typedir",
                             [](py::object self) {
                               const auto& g = self.cast<const cw::CSRGraph&>();
                               return readonly_view(g.edge_typedir(), g.num_edges(), self);
                             })
      .def(
          "find_entry",
          [](const cw::CSRGraph& g, std::int64_t u, std::int64_t v) -> std::int64_t {
            if (u < 0 || u >= g.num_nodes() || v < 0 || v >= g.num_nodes())
              throw py::index_error("node index outside [0, " + std::to_string(g.num_nodes()) + ")");
            return g.find_entry(static_cast<cw::node_t>(u), static_cast<cw::node_t>(v));
          },
          "u"_a, "v"_a, "Adjacency entry of v in u's row, or -1.");

  py::class_<VisibilityMask, std::shared_ptr<VisibilityMask>>(
      m, "VisibilityMask", "A caller's node mask over one graph, with visible degrees precomputed once.")
      .def(py::init([](std::shared_ptr<cw::CSRGraph> g, const carray<bool>& mask) {
             if (!g) throw py::type_error("graph must be a CSRGraph, got None");
             check_1d(mask, "mask", g->num_nodes());
             auto vm = std::make_shared<VisibilityMask>();
             vm->graph = g;
             const bool* src = mask.data();
             {
               Nogil nogil;
               const std::size_t n = static_cast<std::size_t>(g->num_nodes());
               vm->mask.resize(n);
               vm->vdeg.resize(n);
               std::int64_t count = 0;
               for (std::size_t i = 0; i < n; ++i) {
                 vm->mask[i] = src[i] ? 1 : 0;
                 count += vm->mask[i];
               }
               vm->visible_count = count;
               g->visible_rows(vm->mask.data(), vm->vdeg.data(), vm->vindptr, vm->vindices);
             }
             return vm;
           }),
           "graph"_a, "mask"_a)
      .def_property_readonly("visible_count", [](const VisibilityMask& vm) { return vm.visible_count; })
      .def_property_readonly("visible_degrees",
                             [](py::object self) {
                               const auto& vm = self.cast<const VisibilityMask&>();
                               return readonly_view(vm.vdeg.data(), static_cast<std::int64_t>(vm.vdeg.size()),
                                                    self);
                             })
      .def_property_readonly("mask", [](py::object self) {
        const auto& vm = self.cast<const VisibilityMask&>();
        auto a = readonly_view(vm.mask.data(), static_cast<std::int64_t>(vm.mask.size()), self);
        return a.attr("view")("bool");
      });

  py::class_<LiveGraph, std::shared_ptr<LiveGraph>>(
      m, "LiveGraph",
      "A live store's graph (issue 31, docs/live_store.md): an immutable base CSRGraph (shared, never "
      "copied) plus a small delta of new nodes (slots after the base's) and grown rows, every row in "
      "order-key order, so graph_context over it equals a fresh build's bit for bit.")
      // No LiveGraph without grow: pybind11 would let LiveGraph.__new__ make one whose members
      // were never constructed (read as garbage, not as null).
      .def_static("__new__",
                  [](py::args, const py::kwargs&) -> py::object {
                    throw py::type_error("LiveGraph objects are made by LiveGraph.grow");
                  })
      .def_static(
          "grow",
          [](std::shared_ptr<cw::CSRGraph> base, py::handle prev, const carray<std::uint64_t>& keys,
             py::handle a_in, py::handle b_in) {
            if (!base) throw py::type_error("base must be a CSRGraph, got None");
            check_1d(keys, "keys");
            const LiveGraph* p = nullptr;
            if (!prev.is_none()) {
              if (!py::isinstance<LiveGraph>(prev)) throw py::type_error("prev must be a LiveGraph or None");
              p = prev.cast<const LiveGraph*>();
              (void)p->ref();  // initialised
              if (p->base.get() != base.get()) throw py::value_error("prev: a LiveGraph over another base graph");
            }
            // the pairs as node indices (refused, never cast, past int32), and every array copied
            // under the GIL: another thread cannot change them while the core reads them
            const carray<std::int32_t> a = node_array(a_in, *base, "a");
            const carray<std::int32_t> b = node_array(b_in, *base, "b");
            check_1d(a, "a");
            check_1d(b, "b", a.shape(0));
            const std::vector<std::uint64_t> k(keys.data(), keys.data() + keys.shape(0));
            const std::vector<std::int32_t> x(a.data(), a.data() + a.shape(0));
            const std::vector<std::int32_t> y(b.data(), b.data() + b.shape(0));
            auto out = std::make_shared<LiveGraph>();
            out->base = base;
            {
              const cw::GraphDelta* pd = p ? p->delta.get() : nullptr;
              Nogil nogil;
              out->delta = cw::grow_delta(*base, pd, static_cast<std::int64_t>(k.size()), k.data(),
                                          static_cast<std::int64_t>(x.size()), x.data(), y.data());
            }
            return out;
          },
          "base"_a, "prev"_a, "keys"_a, "a"_a, "b"_a,
          "The live graph of `base` plus `prev`'s delta (a LiveGraph over the same base, or None) plus "
          "new nodes and neighbour pairs: `keys` (uint64) are the order keys of every slot past the "
          "base ((gap << 32) | rank; prev's slots first, their order unchanged), `a`/`b` node index "
          "pairs to join (already adjacent, or equal: nothing added).")
      .def_property_readonly("num_nodes", [](const LiveGraph& g) { return live_delta(g)->n; })
      .def_property_readonly("base_nodes", [](const LiveGraph& g) { return live_delta(g)->base_n; })
      .def_property_readonly("base",
                             [](const LiveGraph& g) { return std::const_pointer_cast<cw::CSRGraph>(g.base); })
      .def_property_readonly(
          "delta_rows", [](const LiveGraph& g) { return static_cast<std::int64_t>(live_delta(g)->rows.size()); })
      .def_property_readonly("delta_entries", [](const LiveGraph& g) { return live_delta(g)->num_entries(); })
      .def_property_readonly("arena_entries", [](const LiveGraph& g) { return live_delta(g)->arena->entries(); })
      .def_property_readonly("max_degree", [](const LiveGraph& g) { return live_delta(g)->max_degree; })
      .def(
          "degree",
          [](const LiveGraph& g, std::int64_t u) {
            if (u < 0 || u >= live_delta(g)->n)
              throw cw::NodeOutOfRange("node index " + std::to_string(u) + " outside [0, " +
                                       std::to_string(live_delta(g)->n) + ")");
            return g.ref().degree(static_cast<cw::node_t>(u));
          },
          "u"_a, "Degree of node u over base plus delta.")
      .def(
          "neighbors",
          [](const LiveGraph& g, std::int64_t u) {
            if (u < 0 || u >= live_delta(g)->n)
              throw cw::NodeOutOfRange("node index " + std::to_string(u) + " outside [0, " +
                                       std::to_string(live_delta(g)->n) + ")");
            const cw::node_t* b;
            const cw::node_t* e;
            g.ref().row(static_cast<cw::node_t>(u), b, e);
            py::array_t<std::int32_t> out(e - b);
            std::copy(b, e, out.mutable_data());
            return out;
          },
          "u"_a, "Row u over base plus delta (neighbours in order-key order).");

  py::class_<LiveVisibility, std::shared_ptr<LiveVisibility>>(
      m, "LiveVisibility",
      "A caller's visibility of a LiveGraph: the base's VisibilityMask and the delta's part (the new "
      "slots' mask, the visible degrees of the new slots and of the grown base rows).")
      // No LiveVisibility without make (see LiveGraph's __new__).
      .def_static("__new__",
                  [](py::args, const py::kwargs&) -> py::object {
                    throw py::type_error("LiveVisibility objects are made by LiveVisibility.make");
                  })
      .def_static(
          "make",
          [](py::object live_obj, py::object base_obj, const carray<bool>& slot_mask) {
            if (!py::isinstance<LiveGraph>(live_obj)) throw py::type_error("live must be a LiveGraph");
            if (!py::isinstance<VisibilityMask>(base_obj)) throw py::type_error("base must be a VisibilityMask");
            auto out = std::make_shared<LiveVisibility>();
            out->live_obj = live_obj;
            out->live = live_obj.cast<const LiveGraph*>();
            out->base_obj = base_obj;
            out->base = base_obj.cast<const VisibilityMask*>();
            const cw::GraphDelta& d = *live_delta(*out->live);
            if (out->base->graph.get() != out->live->base.get())
              throw py::value_error(
                  "base: the VisibilityMask was built for another graph than the LiveGraph's base");
            check_1d(slot_mask, "slot_mask", d.n - d.base_n);
            const auto* sm = reinterpret_cast<const std::uint8_t*>(slot_mask.data());
            out->slot_mask.assign(sm, sm + slot_mask.shape(0));
            out->slot_vdeg.resize(out->slot_mask.size());
            out->over_vdeg.resize(d.over.size());
            cw::delta_visible_degrees(d, out->base->mask.data(), out->slot_mask.data(), out->slot_vdeg.data(),
                                      out->over_vdeg.data());
            std::int64_t c = out->base->visible_count;
            for (const std::uint8_t x : out->slot_mask) c += x ? 1 : 0;
            out->visible_count = c;
            out->dv.base_n = d.base_n;
            out->dv.slot_mask = out->slot_mask.data();
            out->dv.slot_vdeg = out->slot_vdeg.data();
            out->dv.over = d.over.data();
            out->dv.over_vdeg = out->over_vdeg.data();
            out->dv.num_over = static_cast<std::int64_t>(d.over.size());
            return out;
          },
          "live"_a, "base"_a, "slot_mask"_a,
          "The visibility of a caller over `live` from its base's VisibilityMask and the new slots' mask.")
      .def_property_readonly("visible_count", [](const LiveVisibility& v) { return v.visible_count; })
      .def(
          "degree",
          [](const LiveVisibility& v, std::int64_t u) {
            if (u < 0 || u >= live_delta(*v.live)->n)
              throw cw::NodeOutOfRange("node index " + std::to_string(u) + " outside [0, " +
                                       std::to_string(live_delta(*v.live)->n) + ")");
            return v.live->ref().degree(static_cast<cw::node_t>(u), v.view());
          },
          "u"_a, "Visible degree of node u over base plus delta (0 for a hidden node).");
}
