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
  std::vector<node_t>& touched = ws.touched;
  touched.clear();
  // flag: 1 = a or a neighbour of a (excluded); score in ws.p; shared count in ws.ia (-1 clean).
  ws.flag[a] = 1;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) ws.flag[indices[j]] = 1;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) {
    const node_t z = indices[j];
    if (!CSRGraph::visible(z, vis)) continue;
    const double w = 1.0 / static_cast<double>(g.degree(z, vis));
    for (offset_t t = indptr[z]; t < indptr[z + 1]; ++t) {
      const node_t b = indices[t];
      if (ws.flag[b] || !CSRGraph::visible(b, vis)) continue;
      if (ws.ia[b] < 0) {
        ws.ia[b] = 0;
        touched.push_back(b);
      }
      ws.ia[b] += 1;
      ws.p[b] += w;
    }
  }
  RAResult res;
  std::vector<node_t>& cand = ws.tmp;
  cand.clear();
  for (node_t b : touched)
    if (ws.ia[b] >= min_shared) cand.push_back(b);
  res.candidates = static_cast<std::int64_t>(cand.size());
  const double* p = ws.p.data();
  auto cmp = [p](node_t x, node_t y) { return p[x] != p[y] ? p[x] > p[y] : x < y; };
  if (k > 0 && static_cast<std::size_t>(k) < cand.size()) {
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), cmp);
    cand.resize(static_cast<std::size_t>(k));
  } else {
    std::sort(cand.begin(), cand.end(), cmp);
  }
  res.targets.assign(cand.begin(), cand.end());
  res.scores.reserve(cand.size());
  res.shared_ptr.reserve(cand.size() + 1);
  res.shared_ptr.push_back(0);
  for (node_t b : res.targets) {
    res.scores.push_back(ws.p[b]);
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
    ws.ia[b] = -1;
    ws.p[b] = 0.0;
  }
  touched.clear();
  cand.clear();
  ws.flag[a] = 0;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) ws.flag[indices[j]] = 0;
  return res;
}

}  // namespace cw
