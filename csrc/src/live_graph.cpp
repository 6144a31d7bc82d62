#include "conceptwalk/live_graph.hpp"

#include <iterator>
#include <limits>
#include <string>
#include <utility>

namespace cw {

std::shared_ptr<const GraphDelta> grow_delta(const CSRGraph& base, const GraphDelta* prev, std::int64_t num_keys,
                                             const std::uint64_t* keys, std::int64_t num_pairs, const node_t* a,
                                             const node_t* b) {
  const node_t B = base.num_nodes();
  if (prev && prev->base_n != B) throw InvalidArgument("prev: a delta over another base graph");
  const std::int64_t d0 = prev ? static_cast<std::int64_t>(prev->n) - B : 0;
  if (num_keys < d0)
    throw InvalidArgument("keys: " + std::to_string(num_keys) + " keys for a delta of " + std::to_string(d0) +
                          " slots already");
  if (num_keys > static_cast<std::int64_t>(std::numeric_limits<node_t>::max()) - B)
    throw InvalidArgument("keys: too many nodes for int32 node indices");
  if (num_pairs < 0) throw InvalidArgument("negative array length");
  const node_t n = static_cast<node_t>(B + num_keys);
  for (std::int64_t i = 0; i < num_keys; ++i) {
    const std::uint64_t k = keys[i];
    if ((k >> 32) > static_cast<std::uint64_t>(B) || (k & 0xFFFFFFFFull) == 0xFFFFFFFFull)
      throw InvalidArgument("keys[" + std::to_string(i) +
                            "] is not a new node's order key (gap <= " + std::to_string(B) + ", rank < 2^32 - 1)");
  }
  // Distinct keys, prev's slots in the same relative order as before (their rows stay sorted):
  // prev's slots in its key order must still be strictly ascending, and merged with the new
  // slots (sorted) the whole stays strictly ascending. O(delta + new log new).
  std::vector<node_t> by_key;
  by_key.reserve(static_cast<std::size_t>(num_keys));
  {
    std::vector<node_t> fresh;
    for (std::int64_t i = d0; i < num_keys; ++i) fresh.push_back(static_cast<node_t>(i));
    std::sort(fresh.begin(), fresh.end(), [&](node_t x, node_t y) { return keys[x] < keys[y]; });
    const std::vector<node_t> none;
    const std::vector<node_t>& old = prev ? prev->by_key : none;
    std::merge(old.begin(), old.end(), fresh.begin(), fresh.end(), std::back_inserter(by_key),
               [&](node_t x, node_t y) { return keys[x] < keys[y]; });
    for (std::size_t i = 1; i < old.size(); ++i)
      if (!(keys[old[i - 1]] < keys[old[i]]))
        throw InvalidArgument("keys must keep the order of the delta's earlier nodes");
    for (std::size_t i = 1; i < by_key.size(); ++i)
      if (!(keys[by_key[i - 1]] < keys[by_key[i]])) throw InvalidArgument("keys must be distinct");
  }
  auto key_of = [&](node_t u) { return u >= B ? keys[u - B] : base_order_key(u); };

  // The neighbours to add, per node, in key order.
  std::vector<std::pair<node_t, node_t>> adds;
  adds.reserve(static_cast<std::size_t>(num_pairs) * 2);
  for (std::int64_t i = 0; i < num_pairs; ++i) {
    const node_t x = a[i], y = b[i];
    if (x < 0 || x >= n || y < 0 || y >= n)
      throw InvalidArgument("pair " + std::to_string(i) + ": a node index outside [0, " + std::to_string(n) + ")");
    if (x == y) continue;
    adds.emplace_back(x, y);
    adds.emplace_back(y, x);
  }
  std::sort(adds.begin(), adds.end(), [&](const std::pair<node_t, node_t>& p, const std::pair<node_t, node_t>& q) {
    return p.first != q.first ? p.first < q.first : key_of(p.second) < key_of(q.second);
  });
  adds.erase(std::unique(adds.begin(), adds.end()), adds.end());

  auto d = std::make_shared<GraphDelta>();
  d->base_n = B;
  d->n = n;
  d->keys.assign(keys, keys + num_keys);
  d->by_key = std::move(by_key);
  // over: prev's and the touched base nodes, ascending
  {
    std::vector<node_t> touched;
    for (const auto& p : adds)
      if (p.first < B && (touched.empty() || touched.back() != p.first)) touched.push_back(p.first);
    const std::vector<node_t> none;
    const std::vector<node_t>& was = prev ? prev->over : none;
    d->over.reserve(was.size() + touched.size());
    std::set_union(was.begin(), was.end(), touched.begin(), touched.end(), std::back_inserter(d->over));
  }
  const std::size_t rows = static_cast<std::size_t>(num_keys) + d->over.size();
  d->ptr.assign(rows + 1, 0);
  d->ind.reserve((prev ? prev->ind.size() : 0) + adds.size());
  std::int32_t maxdeg = prev ? prev->max_degree : base.max_degree();
  GraphRef old = prev ? GraphRef(base, prev) : GraphRef(base);
  std::size_t ai = 0;
  auto emit = [&](std::size_t r, node_t u) {
    const node_t* sb = nullptr;
    const node_t* se = nullptr;
    if (static_cast<std::int64_t>(u) < B + d0) old.row(u, sb, se);  // a new slot's row starts empty
    while (ai < adds.size() && adds[ai].first < u) ++ai;
    std::size_t aj = ai;
    while (aj < adds.size() && adds[aj].first == u) ++aj;
    // merge the row with the additions (key order), an addition already present kept once
    std::size_t x = ai;
    while (x < aj) {
      if (sb == se) {
        d->ind.push_back(adds[x++].second);
      } else {
        const std::uint64_t ks = key_of(*sb), ka = key_of(adds[x].second);
        if (ks < ka) {
          d->ind.push_back(*sb++);
        } else {
          if (ks == ka) ++sb;
          d->ind.push_back(adds[x++].second);
        }
      }
    }
    d->ind.insert(d->ind.end(), sb, se);  // the rest of the row (all of it when untouched)
    ai = aj;
    d->ptr[r + 1] = static_cast<offset_t>(d->ind.size());
    maxdeg = std::max(maxdeg, static_cast<std::int32_t>(d->ptr[r + 1] - d->ptr[r]));
  };
  // new slots' rows in slot order, then over's rows: additions are sorted by node, so walk them in
  // two passes (base nodes first: over ascending; then the slots)
  {
    std::size_t r = static_cast<std::size_t>(num_keys);
    ai = 0;
    for (const node_t u : d->over) emit(r++, u);
    // the over rows were written first into ind: lay the slots' rows before them
    std::vector<node_t> over_ind(std::move(d->ind));
    std::vector<offset_t> over_ptr(d->ptr.begin() + num_keys, d->ptr.end());
    const offset_t first = over_ptr.front();
    d->ind.clear();
    d->ind.reserve(over_ind.size() + adds.size());
    d->ptr[0] = 0;
    while (ai < adds.size() && adds[ai].first < B) ++ai;
    for (std::int64_t s = 0; s < num_keys; ++s) emit(static_cast<std::size_t>(s), static_cast<node_t>(B + s));
    const offset_t shift = static_cast<offset_t>(d->ind.size()) - first;
    d->ind.insert(d->ind.end(), over_ind.begin() + first, over_ind.end());
    for (std::size_t i = 0; i < d->over.size(); ++i)
      d->ptr[static_cast<std::size_t>(num_keys) + i + 1] = over_ptr[i + 1] + shift;
  }
  for (const node_t u : d->over) {
    const std::uint32_t bit = static_cast<std::uint32_t>(u) & (GraphDelta::kFilterBits - 1);
    d->filter[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }
  d->max_degree = maxdeg;
  return d;
}

}  // namespace cw
