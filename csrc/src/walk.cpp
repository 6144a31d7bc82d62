#include "conceptwalk/walk.hpp"

#include <string>

#include "conceptwalk/workspace.hpp"

namespace cw {

namespace {

// Does the pair behind adjacency entry e of row u carry an edge whose type is flagged?
bool pair_has_type(const CSRGraph& g, node_t u, offset_t e, const std::uint8_t* flags,
                   std::int32_t nflags) {
  if (!flags) return false;
  const std::int32_t p = g.pair_of_entry(u, e);
  const std::int32_t* td = g.edge_typedir();
  for (std::int32_t q = g.pair_ptr()[p]; q < g.pair_ptr()[p + 1]; ++q) {
    const std::int32_t t = td[q] >> 1;
    if (t < nflags && flags[t]) return true;
  }
  return false;
}

bool node_ok(const WalkParams& wp, const std::uint8_t* flags, node_t v) {
  if (!flags || !wp.node_type) return true;
  const std::int32_t t = wp.node_type[v];
  return t >= 0 && t < wp.num_node_type_flags && flags[t];
}

}  // namespace

WalkResult typed_walk(const CSRGraph& g, const Visibility& vis, std::int64_t nstarts,
                      const node_t* starts, const WalkParams& wp) {
  if (wp.max_hops < 1 || wp.max_hops > kWalkMaxHopsLimit)
    throw InvalidArgument("max_hops must be in [1, " + std::to_string(kWalkMaxHopsLimit) +
                          "], got " + std::to_string(wp.max_hops));
  if (wp.max_edges < 0) throw InvalidArgument("max_edges must be >= 0");
  if (wp.max_candidates < 0) throw InvalidArgument("max_candidates must be >= 0");
  if (wp.num_type_flags < 0 || wp.num_node_type_flags < 0)
    throw InvalidArgument("flag array lengths must be >= 0");
  for (std::int64_t i = 0; i < nstarts; ++i) {
    const node_t s = starts[i];
    if (s < 0 || s >= g.num_nodes())
      throw NodeOutOfRange("start index " + std::to_string(s) + " outside [0, " +
                           std::to_string(g.num_nodes()) + ")");
    if (!CSRGraph::visible(s, vis)) throw NodeOutOfRange("start index " + std::to_string(s) + " is not visible");
  }
  const std::int32_t W = wp.max_hops + 1;
  WalkResult res;
  res.width = W;
  Workspace& ws = thread_workspace(g.num_nodes());
  // flag bit 1: start node; bit 2: already a candidate.
  std::vector<node_t>& marked = ws.touched;
  marked.clear();
  for (std::int64_t i = 0; i < nstarts; ++i) {
    if (!ws.flag[starts[i]]) marked.push_back(starts[i]);
    ws.flag[starts[i]] |= 1;
  }
  // Frontier of paths: each path is W nodes + (W-1) entries, stored flat.
  std::vector<node_t> frontier_nodes, next_nodes;
  std::vector<std::int64_t> frontier_entries, next_entries;
  const offset_t* indptr = g.indptr();
  const node_t* indices = g.indices();
  {
    for (std::int64_t i = 0; i < nstarts; ++i) {
      const node_t s = starts[i];
      bool seen_before = false;
      for (std::int64_t j = 0; j < i && !seen_before; ++j) seen_before = starts[j] == s;
      if (seen_before) continue;
      frontier_nodes.push_back(s);
      for (std::int32_t c = 1; c < W; ++c) frontier_nodes.push_back(-1);
      for (std::int32_t c = 0; c + 1 < W; ++c) frontier_entries.push_back(-1);
    }
  }
  bool stop = false;
  for (std::int32_t h = 1; h <= wp.max_hops && !stop; ++h) {
    next_nodes.clear();
    next_entries.clear();
    const std::size_t npaths = frontier_nodes.size() / static_cast<std::size_t>(W);
    for (std::size_t pi = 0; pi < npaths && !stop; ++pi) {
      const node_t* pn = &frontier_nodes[pi * W];
      const std::int64_t* pe = &frontier_entries[pi * (W - 1)];
      const node_t u = pn[h - 1];
      for (offset_t e = indptr[u]; e < indptr[u + 1]; ++e) {
        const node_t v = indices[e];
        if (!CSRGraph::visible(v, vis)) continue;
        if (res.edges_visited >= wp.max_edges) {
          res.truncated = true;
          stop = true;
          break;
        }
        ++res.edges_visited;
        bool on_path = false;
        for (std::int32_t c = 0; c < h; ++c) on_path = on_path || pn[c] == v;
        if (on_path) continue;
        if (!(ws.flag[v] & 1) && pair_has_type(g, u, e, wp.admit_types, wp.num_type_flags) &&
            node_ok(wp, wp.admit_node_types, v)) {
          if (!(ws.flag[v] & 2)) {
            if (static_cast<std::int64_t>(res.candidates.size()) >= wp.max_candidates) {
              res.truncated = true;
              stop = true;
              break;
            }
            if (!ws.flag[v]) marked.push_back(v);
            ws.flag[v] |= 2;
            res.candidates.push_back(v);
          }
          for (std::int32_t c = 0; c < h; ++c) res.path_nodes.push_back(pn[c]);
          res.path_nodes.push_back(v);
          for (std::int32_t c = h + 1; c < W; ++c) res.path_nodes.push_back(-1);
          for (std::int32_t c = 0; c + 1 < h; ++c) res.path_entries.push_back(pe[c]);
          res.path_entries.push_back(e);
          for (std::int32_t c = h; c + 1 < W; ++c) res.path_entries.push_back(-1);
          res.path_hops.push_back(h);
        }
        if (h < wp.max_hops && pair_has_type(g, u, e, wp.expand_types, wp.num_type_flags) &&
            node_ok(wp, wp.expand_node_types, v)) {
          for (std::int32_t c = 0; c < h; ++c) next_nodes.push_back(pn[c]);
          next_nodes.push_back(v);
          for (std::int32_t c = h + 1; c < W; ++c) next_nodes.push_back(-1);
          for (std::int32_t c = 0; c + 1 < h; ++c) next_entries.push_back(pe[c]);
          next_entries.push_back(e);
          for (std::int32_t c = h; c + 1 < W; ++c) next_entries.push_back(-1);
        }
      }
    }
    frontier_nodes.swap(next_nodes);
    frontier_entries.swap(next_entries);
  }
  for (node_t v : marked) ws.flag[v] = 0;
  marked.clear();
  return res;
}

}  // namespace cw
