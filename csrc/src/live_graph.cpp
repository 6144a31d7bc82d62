#include "conceptwalk/live_graph.hpp"

#include <iterator>
#include <limits>
#include <string>
#include <utility>

namespace cw {

node_t* RowArena::alloc(std::size_t len) {
  std::lock_guard<std::mutex> lock(m_);
  entries_ += static_cast<std::int64_t>(len);
  if (len == 0) len = 1;  // a valid pointer for an empty row
  if (len > kChunk) {     // a long row gets a chunk of its own, before the current one
    chunks_.emplace(chunks_.empty() ? chunks_.end() : chunks_.end() - 1, new node_t[len]);
    return chunks_[chunks_.size() >= 2 ? chunks_.size() - 2 : 0].get();
  }
  if (chunks_.empty() || cap_ - used_ < len) {
    chunks_.emplace_back(new node_t[kChunk]);
    used_ = 0;
    cap_ = kChunk;
  }
  node_t* p = chunks_.back().get() + used_;
  used_ += len;
  return p;
}

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
  d->arena = prev ? prev->arena : std::make_shared<RowArena>();
  d->filter = prev ? prev->filter : decltype(d->filter){};
  // over: prev's and the touched base nodes, ascending; rows: prev's (shared), a new slot's empty,
  // a newly grown base node's the base row (rewritten below)
  std::vector<node_t> touched_base;
  for (const auto& p : adds)
    if (p.first < B && (touched_base.empty() || touched_base.back() != p.first)) touched_base.push_back(p.first);
  {
    const std::vector<node_t> none;
    const std::vector<node_t>& was = prev ? prev->over : none;
    d->over.reserve(was.size() + touched_base.size());
    d->rows.reserve(static_cast<std::size_t>(num_keys) + was.size() + touched_base.size());
    if (prev) d->rows.assign(prev->rows.begin(), prev->rows.begin() + d0);
    d->rows.resize(static_cast<std::size_t>(num_keys));  // the new slots: empty rows
    std::size_t i = 0, j = 0;
    while (i < was.size() || j < touched_base.size()) {
      if (j == touched_base.size() || (i < was.size() && was[i] < touched_base[j])) {
        d->over.push_back(was[i]);
        d->rows.push_back(prev->rows[static_cast<std::size_t>(d0) + i]);
        ++i;
      } else {
        const node_t u = touched_base[j];
        if (i < was.size() && was[i] == u) {
          d->rows.push_back(prev->rows[static_cast<std::size_t>(d0) + i]);
          ++i;
        } else {
          const offset_t* ip = base.indptr();
          d->rows.push_back(DeltaRow{base.indices() + ip[u], static_cast<std::int32_t>(ip[u + 1] - ip[u])});
        }
        d->over.push_back(u);
        ++j;
      }
    }
  }
  for (const node_t u : d->over) {
    const std::uint32_t bit = static_cast<std::uint32_t>(u) & (GraphDelta::kFilterBits - 1);
    d->filter[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }
  // the touched rows: merged with their additions (key order; one already present kept once)
  std::int32_t maxdeg = prev ? prev->max_degree : base.max_degree();
  std::vector<node_t> merged;
  for (std::size_t ai = 0; ai < adds.size();) {
    const node_t u = adds[ai].first;
    std::size_t aj = ai;
    while (aj < adds.size() && adds[aj].first == u) ++aj;
    const std::int64_t r = d->row_of(u);
    DeltaRow& row = d->rows[static_cast<std::size_t>(r)];
    const node_t* sb = row.p;
    const node_t* se = row.p + row.len;
    merged.clear();
    for (std::size_t x = ai; x < aj;) {
      if (sb == se) {
        merged.push_back(adds[x++].second);
        continue;
      }
      const std::uint64_t ks = key_of(*sb), ka = key_of(adds[x].second);
      if (ks < ka) {
        merged.push_back(*sb++);
      } else {
        if (ks == ka) ++sb;
        merged.push_back(adds[x++].second);
      }
    }
    merged.insert(merged.end(), sb, se);
    if (merged.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw InvalidArgument("a row longer than 2^31 - 1 entries");
    node_t* out = d->arena->alloc(merged.size());
    std::copy(merged.begin(), merged.end(), out);
    row = DeltaRow{out, static_cast<std::int32_t>(merged.size())};
    maxdeg = std::max(maxdeg, row.len);
    ai = aj;
  }
  d->max_degree = maxdeg;
  std::int64_t entries = 0;
  for (const DeltaRow& r : d->rows) entries += r.len;
  d->entries = entries;
  return d;
}

void delta_visible_degrees(const GraphDelta& delta, const std::uint8_t* base_mask, const std::uint8_t* slot_mask,
                           std::int32_t* slot_vdeg, std::int32_t* over_vdeg) {
  const node_t B = delta.base_n;
  auto vis = [&](node_t v) { return v < B ? base_mask[v] != 0 : slot_mask[v - B] != 0; };
  auto count = [&](const DeltaRow& r) {
    std::int32_t c = 0;
    for (std::int32_t j = 0; j < r.len; ++j) c += vis(r.p[j]) ? 1 : 0;
    return c;
  };
  const std::size_t ns = static_cast<std::size_t>(delta.n - B);
  for (std::size_t s = 0; s < ns; ++s) slot_vdeg[s] = slot_mask[s] ? count(delta.rows[s]) : 0;
  for (std::size_t i = 0; i < delta.over.size(); ++i)
    over_vdeg[i] = base_mask[delta.over[i]] ? count(delta.rows[ns + i]) : 0;
}

}  // namespace cw
