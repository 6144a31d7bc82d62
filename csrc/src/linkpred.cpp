#include "conceptwalk/linkpred.hpp"

#include <algorithm>
#include <string>

#include "conceptwalk/workspace.hpp"

namespace cw {

RAResult resource_allocation(const CSRGraph& g, const Visibility& vis, node_t a,
                             std::int32_t min_shared, std::int64_t k) {
  if (a < 0 || a >= g.num_nodes())
    throw NodeOutOfRange("node index " + std::to_string(a) + " outside [0, " +
                         std::to_string(g.num_nodes()) + ")");
  if (!CSRGraph::visible(a, vis)) throw NodeOutOfRange("node index " + std::to_string(a) + " is not visible");
  if (min_shared < 1) throw InvalidArgument("min_shared must be >= 1, got " + std::to_string(min_shared));

  Workspace& ws = thread_workspace(g.num_nodes());
  const offset_t* indptr = g.indptr();
  const node_t* indices = g.indices();
  PushNode* nd = ws.node.data();
  std::vector<node_t>& touched = ws.touched;
  touched.clear();
  // Node slot: flags bit 2 = a or a neighbour of a (excluded), bit 0 = candidate; score in p;
  // shared count in deg (valid while bit 0 is set).
  constexpr std::uint32_t kCand = 1, kExcluded = 4;
  nd[a].flags = kExcluded;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) nd[indices[j]].flags = kExcluded;
  const std::uint8_t* mask = vis.mask;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) {
    const node_t z = indices[j];
    if (!CSRGraph::visible(z, vis)) continue;
    const double w = 1.0 / static_cast<double>(g.degree(z, vis));
    for (offset_t t = indptr[z]; t < indptr[z + 1]; ++t) {
      const node_t b = indices[t];
      PushNode& x = nd[b];
      const std::uint32_t f = x.flags;
      if ((f & kExcluded) || (mask && !mask[b])) continue;
      if (!(f & kCand)) {
        x.flags = kCand;
        x.deg = 0;
        touched.push_back(b);
      }
      x.deg += 1;
      x.p += w;
    }
  }
  RAResult res;
  struct Item {
    double p;
    node_t b;
  };
  std::vector<Item> cand;
  for (node_t b : touched)
    if (nd[b].deg >= min_shared) cand.push_back(Item{nd[b].p, b});
  res.candidates = static_cast<std::int64_t>(cand.size());
  auto cmp = [](const Item& x, const Item& y) { return x.p != y.p ? x.p > y.p : x.b < y.b; };
  if (k > 0 && static_cast<std::size_t>(k) < cand.size()) {
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), cmp);
    cand.resize(static_cast<std::size_t>(k));
  } else {
    std::sort(cand.begin(), cand.end(), cmp);
  }
  res.targets.reserve(cand.size());
  for (const Item& it : cand) res.targets.push_back(it.b);
  res.scores.reserve(cand.size());
  res.shared_ptr.reserve(cand.size() + 1);
  res.shared_ptr.push_back(0);
  for (node_t b : res.targets) {
    res.scores.push_back(nd[b].p);
    // Merge-intersect the sorted rows of a and b, visible nodes only.
    offset_t i = indptr[a], ie = indptr[a + 1], j = indptr[b], je = indptr[b + 1];
    while (i < ie && j < je) {
      const node_t x = indices[i], y = indices[j];
      if (x < y) ++i;
      else if (y < x) ++j;
      else {
        if (CSRGraph::visible(x, vis)) res.shared.push_back(x);
        ++i;
        ++j;
      }
    }
    res.shared_ptr.push_back(static_cast<std::int64_t>(res.shared.size()));
  }
  // Clean the workspace.
  for (node_t b : touched) {
    nd[b].p = 0.0;
    nd[b].flags = 0;
  }
  touched.clear();
  nd[a].flags = 0;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) nd[indices[j]].flags = 0;
  return res;
}

}  // namespace cw
