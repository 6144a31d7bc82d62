#include "conceptwalk/path.hpp"

#include <algorithm>
#include <string>

#include "conceptwalk/check.hpp"
#include "conceptwalk/workspace.hpp"

namespace cw {

PathResult shortest_path(const CSRGraph& g, const Visibility& vis, node_t s, node_t t) {
  check_node(g, vis, s, "source");
  check_node(g, vis, t, "target");
  PathResult res;
  if (s == t) {
    res.path.push_back(s);
    res.visited = 1;
    return res;
  }
  Workspace& ws = thread_workspace(g.num_nodes());
  const offset_t* indptr = g.indptr();
  const node_t* indices = g.indices();
  auto& ds = ws.ia;                        // distance from s
  auto& dt = ws.ib;                        // distance from t
  std::vector<node_t>& seen_s = ws.queue;  // BFS order, layers contiguous
  std::vector<node_t>& seen_t = ws.next;
  seen_s.clear();
  seen_t.clear();
  std::vector<std::size_t> layers_s{0}, layers_t{0};  // layer start offsets into seen_*
  ds[s] = 0;
  seen_s.push_back(s);
  layers_s.push_back(1);
  dt[t] = 0;
  seen_t.push_back(t);
  layers_t.push_back(1);
  std::int32_t ks = 0, kt = 0;
  bool met = false;
  while (!met) {
    const std::size_t fs = layers_s[ks + 1] - layers_s[ks];
    const std::size_t ft = layers_t[kt + 1] - layers_t[kt];
    if (fs == 0 || ft == 0) break;
    const bool from_s = fs <= ft;
    auto& dist = from_s ? ds : dt;
    auto& other = from_s ? dt : ds;
    std::vector<node_t>& seen = from_s ? seen_s : seen_t;
    std::vector<std::size_t>& layers = from_s ? layers_s : layers_t;
    std::int32_t& k = from_s ? ks : kt;
    const std::size_t b = layers[k], e = layers[k + 1];
    for (std::size_t i = b; i < e; ++i) {
      const node_t u = seen[i];
      for (offset_t j = indptr[u]; j < indptr[u + 1]; ++j) {
        const node_t v = indices[j];
        if (dist[v] >= 0 || !CSRGraph::visible(v, vis)) continue;
        dist[v] = k + 1;
        seen.push_back(v);
        if (other[v] >= 0) met = true;
      }
    }
    layers.push_back(seen.size());
    ++k;
  }
  res.visited = static_cast<std::int64_t>(seen_s.size() + seen_t.size());
  if (met) {
    const std::int32_t d = ks + kt;
    // Mark nodes on shortest paths at positions 0..ks: the meeting layer, then backwards.
    for (std::size_t i = layers_s[ks]; i < layers_s[ks + 1]; ++i) {
      const node_t v = seen_s[i];
      if (dt[v] == kt) ws.flag[v] = 1;
    }
    for (std::int32_t j = ks - 1; j >= 0; --j) {
      for (std::size_t i = layers_s[j]; i < layers_s[j + 1]; ++i) {
        const node_t v = seen_s[i];
        for (offset_t q = indptr[v]; q < indptr[v + 1]; ++q) {
          const node_t w = indices[q];
          if (ds[w] == j + 1 && ws.flag[w]) {
            ws.flag[v] = 1;
            break;
          }
        }
      }
    }
    // Greedy lexicographically smallest walk along the shortest-path DAG.
    res.path.reserve(static_cast<std::size_t>(d) + 1);
    node_t x = s;
    res.path.push_back(x);
    for (std::int32_t j = 0; j < d; ++j) {
      node_t best = -1;
      for (offset_t q = indptr[x]; q < indptr[x + 1]; ++q) {  // ascending: first match is smallest
        const node_t w = indices[q];
        if (!CSRGraph::visible(w, vis)) continue;
        const bool ok = (j + 1 <= ks) ? (ds[w] == j + 1 && ws.flag[w]) : (dt[w] == d - j - 1);
        if (ok) {
          best = w;
          break;
        }
      }
      x = best;  // always found: every marked node continues to t
      res.path.push_back(x);
    }
  }
  for (node_t v : seen_s) {
    ds[v] = -1;
    ws.flag[v] = 0;
  }
  for (node_t v : seen_t) dt[v] = -1;
  seen_s.clear();
  seen_t.clear();
  return res;
}

HopsResult multi_source_hops(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                             std::int64_t ntargets, const node_t* targets, std::int32_t max_hops) {
  check_nodes(g, vis, nseeds, seeds, "seed");
  check_in_range(g, ntargets, targets, "target");
  Workspace& ws = thread_workspace(g.num_nodes());
  const offset_t* indptr = g.indptr();
  const node_t* indices = g.indices();
  auto& dist = ws.ia;
  auto& via = ws.ib;
  std::vector<node_t>& seen = ws.queue;
  seen.clear();
  // Targets still to find: flag = 1.
  std::int64_t remaining = 0;
  for (std::int64_t i = 0; i < ntargets; ++i) {
    const node_t t = targets[i];
    if (!ws.flag[t] && CSRGraph::visible(t, vis)) {
      ws.flag[t] = 1;
      ++remaining;
    }
  }
  auto reach = [&](node_t v, std::int32_t d, node_t from) {
    dist[v] = d;
    via[v] = from;
    seen.push_back(v);
    if (ws.flag[v] == 1) {
      ws.flag[v] = 2;
      --remaining;
    }
  };
  for (std::int64_t i = 0; i < nseeds; ++i) {
    const node_t s = seeds[i];
    if (dist[s] < 0)
      reach(s, 0, s);
    else
      via[s] = std::min(via[s], s);
  }
  std::size_t b = 0, e = seen.size();
  std::int32_t depth = 0;
  while (remaining > 0 && b < e && (max_hops < 0 || depth < max_hops)) {
    for (std::size_t i = b; i < e; ++i) {
      const node_t u = seen[i];
      for (offset_t j = indptr[u]; j < indptr[u + 1]; ++j) {
        const node_t v = indices[j];
        if (!CSRGraph::visible(v, vis)) continue;
        if (dist[v] < 0)
          reach(v, depth + 1, via[u]);
        else if (dist[v] == depth + 1 && via[u] < via[v])
          via[v] = via[u];
      }
    }
    b = e;
    e = seen.size();
    ++depth;
  }
  HopsResult res;
  res.hops.resize(static_cast<std::size_t>(ntargets));
  res.via.resize(static_cast<std::size_t>(ntargets));
  for (std::int64_t i = 0; i < ntargets; ++i) {
    const node_t t = targets[i];
    res.hops[i] = dist[t];
    res.via[i] = dist[t] >= 0 ? via[t] : -1;
  }
  for (node_t v : seen) {
    dist[v] = -1;
    via[v] = -1;
  }
  for (std::int64_t i = 0; i < ntargets; ++i) ws.flag[targets[i]] = 0;
  seen.clear();
  return res;
}

}  // namespace cw
