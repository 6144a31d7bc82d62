#include "conceptwalk/path.hpp"

#include <algorithm>
#include <string>

#include "conceptwalk/check.hpp"
#include "conceptwalk/workspace.hpp"

namespace cw {

namespace {

// Per-thread scratch of the bidirectional BFS, grown on demand and clean between queries (both
// distances -1, mark 0): a query resets only the nodes it reached. Both distances of a node sit
// in one 8-byte slot, so the "reached from the other side?" test reads the line just read.
struct BfsScratch {
  struct Slot {
    std::int32_t d[2];  // distance from s (side 0) and from t (side 1); -1: not reached
  };
  RawVector<Slot> dist;
  RawVector<std::uint8_t> mark;  // on a shortest path (the backward pass)
  RawVector<node_t> seen[2];     // BFS order per side, layers contiguous (capacity n each)
  std::vector<std::size_t> layers[2];

  void ensure(std::size_t n) {
    if (dist.size() < n) {
      const std::size_t old = dist.size();
      dist.resize(n);
      mark.resize(n);
      for (std::size_t i = old; i < n; ++i) {
        dist[i].d[0] = dist[i].d[1] = -1;
        mark[i] = 0;
      }
      seen[0].resize(n);
      seen[1].resize(n);
    }
  }
};

BfsScratch& bfs_scratch(node_t n) {
  thread_local BfsScratch ws;
  ws.ensure(static_cast<std::size_t>(n));
  return ws;
}

}  // namespace

PathResult shortest_path(const GraphRef& g, const Visibility& vis, node_t s, node_t t) {
  check_node(g, vis, s, "source");
  check_node(g, vis, t, "target");
  PathResult res;
  if (s == t) {
    res.path.push_back(s);
    res.visited = 1;
    return res;
  }
  if (g.delta() && (vis.vindptr || (vis.mask && !vis.delta)))
    throw InvalidArgument("a graph with a delta reads a mask with its delta's part (a LiveVisibility)");
  BfsScratch& ws = bfs_scratch(g.num_nodes());
  // rows through GraphRef (in id order: a live graph's rows are in key order), the mask through
  // the delta's part when there is one
  const std::uint8_t* const mask = vis.mask;
  const bool delta = vis.delta != nullptr;
  auto hidden = [&](node_t v) { return mask && (delta ? !CSRGraph::visible(v, vis) : !mask[v]); };
  BfsScratch::Slot* const dist = ws.dist.data();
  std::uint8_t* const mark = ws.mark.data();
  node_t* const seen[2] = {ws.seen[0].data(), ws.seen[1].data()};
  std::size_t count[2] = {1, 1};  // nodes in seen[side]
  std::vector<std::size_t>* const layers = ws.layers;
  layers[0].assign({0, 1});
  layers[1].assign({0, 1});
  dist[s].d[0] = 0;
  seen[0][0] = s;
  dist[t].d[1] = 0;
  seen[1][0] = t;
  std::int32_t depth[2] = {0, 0};
  bool met = false;
  while (!met) {
    const std::size_t fs = layers[0][depth[0] + 1] - layers[0][depth[0]];
    const std::size_t ft = layers[1][depth[1] + 1] - layers[1][depth[1]];
    if (fs == 0 || ft == 0) break;
    const int side = fs <= ft ? 0 : 1;
    const int other = 1 - side;
    node_t* const out = seen[side];
    std::size_t c = count[side];
    const std::int32_t next = depth[side] + 1;
    const std::size_t b = layers[side][depth[side]], e = layers[side][depth[side] + 1];
    bool hit = false;
    for (std::size_t i = b; i < e; ++i) {
      const node_t u = out[i];
      const node_t* jb;
      const node_t* je;
      g.row(u, jb, je);
      for (; jb != je; ++jb) {
        const node_t v = *jb;
        BfsScratch::Slot& x = dist[v];
        if (x.d[side] >= 0 || hidden(v)) continue;
        x.d[side] = next;
        out[c++] = v;  // each node enters a side once: c <= n
        hit |= x.d[other] >= 0;
      }
    }
    met = hit;
    count[side] = c;
    layers[side].push_back(c);
    depth[side] = next;
  }
  const std::int32_t ks = depth[0], kt = depth[1];
  const std::vector<std::size_t>& ls = layers[0];
  node_t* const seen_s = seen[0];
  res.visited = static_cast<std::int64_t>(count[0] + count[1]);
  if (met) {
    const std::int32_t d = ks + kt;
    // Mark nodes on shortest paths at positions 0..ks: the meeting layer, then backwards.
    for (std::size_t i = ls[ks]; i < ls[ks + 1]; ++i) {
      const node_t v = seen_s[i];
      if (dist[v].d[1] == kt) mark[v] = 1;
    }
    for (std::int32_t j = ks - 1; j >= 0; --j) {
      for (std::size_t i = ls[j]; i < ls[j + 1]; ++i) {
        const node_t v = seen_s[i];
        const node_t* qb;
        const node_t* qe;
        g.row(v, qb, qe);
        for (; qb != qe; ++qb) {
          const node_t w = *qb;
          if (dist[w].d[0] == j + 1 && mark[w]) {
            mark[v] = 1;
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
      const node_t* qb;
      const node_t* qe;
      g.row(x, qb, qe);
      for (; qb != qe; ++qb) {  // ascending (id order): the first match is the smallest
        const node_t w = *qb;
        if (hidden(w)) continue;
        const bool ok = (j + 1 <= ks) ? (dist[w].d[0] == j + 1 && mark[w]) : (dist[w].d[1] == d - j - 1);
        if (ok) {
          best = w;
          break;
        }
      }
      x = best;  // always found: every marked node continues to t
      res.path.push_back(x);
    }
  }
  for (std::size_t i = 0; i < count[0]; ++i) {
    const node_t v = seen_s[i];
    dist[v].d[0] = -1;
    mark[v] = 0;
  }
  for (std::size_t i = 0; i < count[1]; ++i) dist[seen[1][i]].d[1] = -1;
  return res;
}

ChainsResult shortest_paths_from(const CSRGraph& g, const Visibility& vis, node_t s, std::int64_t ntargets,
                                 const node_t* targets, std::int64_t max_visits) {
  check_node(g, vis, s, "source");
  if (ntargets < 0) throw InvalidArgument("ntargets must be >= 0");
  check_nodes(g, vis, ntargets, targets, "target");
  Workspace& ws = thread_workspace(g.num_nodes(), Workspace::kWorkspaceMarks);
  const offset_t* const indptr = g.indptr();
  const node_t* const indices = g.indices();
  std::int32_t* const dist = ws.ia.data();    // -1 when clean
  std::int32_t* const pred = ws.ib.data();    // -1 when clean
  std::uint8_t* const flag = ws.flag.data();  // 1: a target not reached yet
  std::vector<node_t>& seen = ws.queue;       // BFS order
  seen.clear();
  std::int64_t remaining = 0;
  for (std::int64_t i = 0; i < ntargets; ++i) {
    if (!flag[targets[i]]) {
      flag[targets[i]] = 1;
      ++remaining;
    }
  }
  ChainsResult res;
  dist[s] = 0;
  seen.push_back(s);
  if (flag[s] == 1) {
    flag[s] = 2;
    --remaining;
  }
  for (std::size_t head = 0; remaining > 0 && head < seen.size(); ++head) {
    const node_t u = seen[head];
    const offset_t b = indptr[u], e = indptr[u + 1];
    if (max_visits >= 0 && res.visits + (e - b) > max_visits) break;
    res.visits += e - b;
    const std::int32_t d = dist[u] + 1;
    for (offset_t j = b; j < e; ++j) {
      const node_t v = indices[j];
      if (dist[v] >= 0 || !CSRGraph::visible(v, vis)) continue;
      dist[v] = d;
      pred[v] = u;
      seen.push_back(v);
      if (flag[v] == 1) {
        flag[v] = 2;
        if (--remaining == 0) break;  // every chain is known: predecessors never change
      }
    }
  }
  res.ptr.reserve(static_cast<std::size_t>(ntargets) + 1);
  res.ptr.push_back(0);
  for (std::int64_t i = 0; i < ntargets; ++i) {
    const node_t t = targets[i];
    if (dist[t] >= 0) {
      const std::size_t at = res.path.size();
      res.path.resize(at + static_cast<std::size_t>(dist[t]) + 1);
      node_t x = t;
      for (std::size_t q = res.path.size(); q-- > at;) {  // t back to s
        res.path[q] = x;
        x = pred[x];
      }
    }
    res.ptr.push_back(static_cast<std::int64_t>(res.path.size()));
  }
  for (node_t v : seen) {
    dist[v] = -1;
    pred[v] = -1;
  }
  for (std::int64_t i = 0; i < ntargets; ++i) flag[targets[i]] = 0;
  seen.clear();
  return res;
}

HopsResult multi_source_hops(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                             std::int64_t ntargets, const node_t* targets, std::int32_t max_hops) {
  check_nodes(g, vis, nseeds, seeds, "seed");
  check_in_range(g, ntargets, targets, "target");
  Workspace& ws = thread_workspace(g.num_nodes(), Workspace::kWorkspaceMarks);
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
      via[s] = g.before(s, via[s]) ? s : via[s];
  }
  std::size_t b = 0, e = seen.size();
  std::int32_t depth = 0;
  while (remaining > 0 && b < e && (max_hops < 0 || depth < max_hops)) {
    for (std::size_t i = b; i < e; ++i) {
      const node_t u = seen[i];
      const node_t* jb;
      const node_t* je;
      g.row(u, jb, je);
      for (; jb != je; ++jb) {
        const node_t v = *jb;
        if (!CSRGraph::visible(v, vis)) continue;
        if (dist[v] < 0)
          reach(v, depth + 1, via[u]);
        else if (dist[v] == depth + 1 && g.before(via[u], via[v]))
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
