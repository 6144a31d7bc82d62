#include "conceptwalk/walk.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "conceptwalk/workspace.hpp"

namespace cw {

namespace {

constexpr std::uint8_t kStart = 1;
constexpr std::uint8_t kTaken = 4;

// The edges of one pair, as a hop reads them: per edge its (type << 1) | direction and weight
// (w null: none), in the order a fresh build numbers them; edge i's id is first_id + i.
struct PairEdges {
  const std::int32_t* td = nullptr;
  const double* w = nullptr;
  std::int64_t first_id = 0;
  std::int32_t count = 0;
};

// The edge representing a hop over the pair `pe` under `flags`: among its edges whose type is
// flagged, the one with the highest weight (none ranks lowest), then the lowest id. Returns -1
// when no edge passes; `factor` gets its weight (1 without one).
std::int64_t pick_edge(const PairEdges& pe, const std::uint8_t* flags, std::int32_t nflags, double& factor) {
  if (!flags) return -1;
  std::int64_t best = -1;
  double best_w = 0.0;
  bool best_has = false;
  for (std::int32_t i = 0; i < pe.count; ++i) {
    const std::int32_t t = pe.td[i] >> 1;
    if (!(t < nflags && flags[t])) continue;
    const double w = pe.w ? pe.w[i] : std::numeric_limits<double>::quiet_NaN();
    const bool has = !std::isnan(w);
    if (best < 0 || (has && !best_has) || (has && best_has && w > best_w)) {
      best = pe.first_id + i;
      best_w = w;
      best_has = has;
    }
  }
  factor = best_has ? best_w : 1.0;
  return best;
}

// What the walk reads of a CSRGraph: its rows, the pair behind an entry (with the canonical
// edge weights), and the node order (the index).
struct CsrWalkGraph {
  const CSRGraph& g;
  const double* weights;     // per canonical edge, or null
  mutable bool bad = false;  // (never set: every entry of a CSRGraph has its pair)

  node_t num_nodes() const { return g.num_nodes(); }
  void row(node_t u, const node_t*& b, const node_t*& e) const {
    b = g.indices() + g.indptr()[u];
    e = g.indices() + g.indptr()[u + 1];
  }
  bool before(node_t a, node_t b) const { return a < b; }
  PairEdges pair(node_t u, const node_t* at, node_t /*v*/) const {
    const std::int32_t p = g.pair_of_entry(u, static_cast<offset_t>(at - g.indices()));
    const std::int32_t q0 = g.pair_ptr()[p], q1 = g.pair_ptr()[p + 1];
    return {g.edge_typedir() + q0, weights ? weights + q0 : nullptr, q0, q1 - q0};
  }
};

// What the walk reads of a live graph: base plus delta rows (GraphRef), the pairs the delta lists
// (WalkDeltaEdges) before the base's, and the order keys. A hop over a pair neither lists sets
// `bad` and passes no edge (the walk throws once its workspace is clean).
struct LiveWalkGraph {
  static constexpr std::uint32_t kFilterBits = 1u << 16;
  const GraphRef& g;
  const WalkDeltaEdges& de;
  const double* weights;                                 // per base canonical edge, or null
  std::array<std::uint64_t, kFilterBits / 64> filter{};  // bit lo % 2^16 of every listed pair's lower slot
  mutable bool bad = false;

  LiveWalkGraph(const GraphRef& graph, const WalkDeltaEdges& edges, const double* w)
      : g(graph), de(edges), weights(w) {
    for (std::int64_t i = 0; i < de.num_pairs; ++i) {
      const std::uint32_t lo = static_cast<std::uint32_t>(de.pair_keys[i] >> 32) & (kFilterBits - 1);
      filter[lo >> 6] |= std::uint64_t{1} << (lo & 63);
    }
  }
  node_t num_nodes() const { return g.num_nodes(); }
  void row(node_t u, const node_t*& b, const node_t*& e) const { g.row(u, b, e); }
  bool before(node_t a, node_t b) const { return g.before(a, b); }
  PairEdges pair(node_t u, const node_t* at, node_t v) const {
    const node_t lo = std::min(u, v), hi = std::max(u, v);
    const std::uint32_t bit = static_cast<std::uint32_t>(lo) & (kFilterBits - 1);
    if ((filter[bit >> 6] >> (bit & 63)) & 1u) {
      const std::uint64_t key =
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(lo)) << 32) | static_cast<std::uint32_t>(hi);
      const std::uint64_t* end = de.pair_keys + de.num_pairs;
      const std::uint64_t* it = std::lower_bound(de.pair_keys, end, key);
      if (it != end && *it == key) {
        const std::int32_t q0 = de.pair_ptr[it - de.pair_keys], q1 = de.pair_ptr[it - de.pair_keys + 1];
        return {de.typedir + q0, de.weights ? de.weights + q0 : nullptr, de.first_id + q0, q1 - q0};
      }
    }
    const CSRGraph& base = g.base();
    if (hi >= base.num_nodes()) {
      bad = true;
      return {};
    }
    const node_t* bi = base.indices();
    const std::less<const node_t*> lt;
    std::int32_t p;
    if (!lt(at, bi) && lt(at, bi + base.num_entries())) {
      p = base.pair_of_entry(u, static_cast<offset_t>(at - bi));  // an entry of the base's row
    } else {
      p = base.pair_of(u, v);  // an entry of a row the delta rewrote
    }
    if (p < 0) {
      bad = true;
      return {};
    }
    const std::int32_t q0 = base.pair_ptr()[p], q1 = base.pair_ptr()[p + 1];
    return {base.edge_typedir() + q0, weights ? weights + q0 : nullptr, q0, q1 - q0};
  }
};

bool node_ok(const WalkParams& wp, const std::uint8_t* flags, node_t v) {
  if (!flags || !wp.node_type) return true;
  const std::int32_t t =
      (wp.node_type_tail && v >= wp.node_type_split) ? wp.node_type_tail[v - wp.node_type_split] : wp.node_type[v];
  return t >= 0 && t < wp.num_node_type_flags && flags[t];
}

struct PathRec {
  std::int64_t off;  // into the node / edge stores (W nodes, W - 1 edges per path)
  std::int32_t hops;
  std::int32_t slot;  // the candidate it reaches
  double score;
  double conf;  // product of the hops' edge weights
};

struct StartWalk {
  std::vector<node_t> fn, nn;        // frontier / next level: W nodes per path
  std::vector<std::int64_t> fe, ne;  // W - 1 edges per path
  std::vector<double> ff, nf;        // W - 1 hop factors per path
  std::int32_t h = 1;                // hop being taken
  std::size_t pi = 0;                // path of the frontier being extended
  const node_t* e = nullptr;         // next adjacency entry of that path's end ...
  const node_t* end = nullptr;       // ... and the end of its row
  bool done = false;
};

struct Cand {
  node_t node;
  double score = -std::numeric_limits<double>::infinity();
  double conf = -std::numeric_limits<double>::infinity();
  std::int32_t reach = 0;
  std::int32_t min_hops = std::numeric_limits<std::int32_t>::max();
};

// The walk's growing lists, kept per thread so that a query reuses their capacity instead of
// allocating them (and, before, one path list per candidate) anew: emptied at the start of a walk.
struct WalkScratch {
  std::vector<node_t> store_nodes;
  std::vector<std::int64_t> store_edges;
  std::vector<PathRec> paths;
  std::vector<Cand> cands;
  std::vector<std::int64_t> by_slot_ptr, by_slot;  // the paths grouped by candidate slot
};

WalkScratch& walk_scratch() {
  thread_local WalkScratch s;
  return s;
}

template <class G>
WalkResult walk_impl(const G& g, const Visibility& vis, std::int64_t nstarts, const node_t* starts,
                     const WalkParams& wp) {
  if (wp.max_hops < 1 || wp.max_hops > kWalkMaxHopsLimit)
    throw InvalidArgument("max_hops must be in [1, " + std::to_string(kWalkMaxHopsLimit) + "], got " +
                          std::to_string(wp.max_hops));
  if (wp.max_edges < 0) throw InvalidArgument("max_edges must be >= 0");
  if (wp.max_candidates < 0) throw InvalidArgument("max_candidates must be >= 0");
  if (wp.max_paths < 0) throw InvalidArgument("max_paths must be >= 0");
  if (wp.num_type_flags < 0 || wp.num_node_type_flags < 0)
    throw InvalidArgument("flag array lengths must be >= 0");
  if (!(wp.hop_decay > 0.0 && wp.hop_decay <= 1.0))
    throw InvalidArgument("hop_decay must be in (0, 1], got " + std::to_string(wp.hop_decay));
  if (!(wp.min_share >= 0.0 && wp.min_share <= 1.0))
    throw InvalidArgument("min_share must be in [0, 1], got " + std::to_string(wp.min_share));
  for (std::int64_t i = 0; i < nstarts; ++i) {
    const node_t s = starts[i];
    if (s < 0 || s >= g.num_nodes())
      throw NodeOutOfRange("start index " + std::to_string(s) + " outside [0, " + std::to_string(g.num_nodes()) +
                           ")");
    if (!CSRGraph::visible(s, vis)) throw NodeOutOfRange("start index " + std::to_string(s) + " is not visible");
    if (wp.start_weights) {
      const double w = wp.start_weights[i];
      if (!(std::isfinite(w) && w > 0.0))
        throw InvalidArgument("start_weights[" + std::to_string(i) + "] must be finite and > 0, got " +
                              std::to_string(w));
    }
  }
  const std::int32_t W = wp.max_hops + 1;
  WalkResult res;
  res.width = W;
  res.path_ptr.push_back(0);
  if (nstarts == 0) return res;
  Workspace& ws = thread_workspace(g.num_nodes(), Workspace::kWorkspaceMarks);

  // Distinct starts, each with its largest weight, strongest first (ties: index).
  std::vector<std::pair<node_t, double>> order;
  for (std::int64_t i = 0; i < nstarts; ++i) {
    const double w = wp.start_weights ? wp.start_weights[i] : 1.0;
    bool dup = false;
    for (auto& sw : order)
      if (sw.first == starts[i]) {
        sw.second = std::max(sw.second, w);
        dup = true;
      }
    if (!dup) order.emplace_back(starts[i], w);
  }
  std::stable_sort(order.begin(), order.end(), [&g](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : g.before(a.first, b.first);
  });
  const std::int32_t ns = static_cast<std::int32_t>(order.size());
  std::vector<node_t>& marked = ws.touched;  // nodes whose flag / ia / ib were set
  marked.clear();
  for (const auto& sw : order) {
    ws.flag[sw.first] |= kStart;
    marked.push_back(sw.first);
  }

  WalkScratch& scratch = walk_scratch();
  std::vector<node_t>& store_nodes = scratch.store_nodes;
  std::vector<std::int64_t>& store_edges = scratch.store_edges;
  std::vector<PathRec>& paths = scratch.paths;
  std::vector<Cand>& cands = scratch.cands;  // ws.ib[v] = slot
  store_nodes.clear();
  store_edges.clear();
  paths.clear();
  cands.clear();
  // hop_decay^(h - 1) for h = 1..max_hops, as std::pow gives it
  double decay[kWalkMaxHopsLimit + 1] = {};
  for (std::int32_t h = 1; h <= wp.max_hops; ++h) decay[h] = std::pow(wp.hop_decay, h - 1);
  // per start: (global slot, this start's best score); ws.ia[v] = index into it while it is walked
  std::vector<std::vector<std::pair<std::int32_t, double>>> per_start(ns);
  std::vector<std::vector<node_t>> per_start_seen(ns);
  std::vector<StartWalk> walks(static_cast<std::size_t>(ns));
  for (std::int32_t si = 0; si < ns; ++si) {
    StartWalk& sw = walks[si];
    sw.fn.assign(static_cast<std::size_t>(W), -1);
    sw.fn[0] = order[si].first;
    sw.fe.assign(static_cast<std::size_t>(W - 1), -1);
    sw.ff.assign(static_cast<std::size_t>(W - 1), 1.0);
    g.row(order[si].first, sw.e, sw.end);
  }

  // Walk start si until it is done or has examined `budget` more visible entries; returns the
  // entries examined. The walk is breadth-first per start and can be resumed where it stopped.
  auto run = [&](std::int32_t si, std::int64_t budget) -> std::int64_t {
    StartWalk& w = walks[si];
    const double sweight = order[si].second;
    for (node_t v : per_start_seen[si]) ws.ia[v] = -1;  // (re)build this start's index
    for (std::size_t i = 0; i < per_start[si].size(); ++i)
      ws.ia[cands[per_start[si][i].first].node] = static_cast<std::int32_t>(i);
    std::int64_t used = 0;
    while (!w.done) {
      const std::size_t npaths = w.fn.size() / static_cast<std::size_t>(W);
      if (w.pi >= npaths) {  // level finished
        w.fn.swap(w.nn);
        w.fe.swap(w.ne);
        w.ff.swap(w.nf);
        w.nn.clear();
        w.ne.clear();
        w.nf.clear();
        w.pi = 0;
        ++w.h;
        if (w.h > wp.max_hops || w.fn.empty()) {
          w.done = true;
          break;
        }
        g.row(w.fn[static_cast<std::size_t>(w.h - 1)], w.e, w.end);
        continue;
      }
      const std::int32_t h = w.h;
      const std::size_t pi = w.pi;
      const node_t u = w.fn[pi * W + h - 1];
      if (w.e >= w.end) {
        ++w.pi;
        if (w.pi < npaths) g.row(w.fn[w.pi * W + h - 1], w.e, w.end);
        continue;
      }
      const node_t* at = w.e;
      const node_t v = *at;
      if (!CSRGraph::visible(v, vis)) {
        ++w.e;
        continue;
      }
      if (used >= budget) break;
      ++used;
      ++w.e;
      bool on_path = false;
      for (std::int32_t c = 0; c < h; ++c) on_path = on_path || w.fn[pi * W + c] == v;
      if (on_path) continue;
      double factor = 1.0;
      PairEdges pair;  // the entry's pair, looked up (O(log deg)) by the first gate that needs it
      bool have_pair = false;
      auto pair_of = [&]() -> const PairEdges& {
        if (!have_pair) {
          pair = g.pair(u, at, v);
          have_pair = true;
        }
        return pair;
      };
      if (!(ws.flag[v] & kStart) && node_ok(wp, wp.admit_node_types, v)) {
        const std::int64_t q = pick_edge(pair_of(), wp.admit_types, wp.num_type_flags, factor);
        if (q >= 0) {
          PathRec rec;
          rec.off = static_cast<std::int64_t>(paths.size());
          rec.hops = h;
          double score = sweight * decay[h];
          double conf = 1.0;
          for (std::int32_t c = 0; c + 1 < h; ++c) {
            score *= w.ff[pi * (W - 1) + c];
            conf *= w.ff[pi * (W - 1) + c];
          }
          score *= factor;
          conf *= factor;
          rec.score = score;
          rec.conf = conf;
          for (std::int32_t c = 0; c < h; ++c) store_nodes.push_back(w.fn[pi * W + c]);
          store_nodes.push_back(v);
          for (std::int32_t c = h + 1; c < W; ++c) store_nodes.push_back(-1);
          for (std::int32_t c = 0; c + 1 < h; ++c) store_edges.push_back(w.fe[pi * (W - 1) + c]);
          store_edges.push_back(q);
          for (std::int32_t c = h; c + 1 < W; ++c) store_edges.push_back(-1);
          std::int32_t slot = ws.ib[v];
          if (slot < 0) {
            slot = static_cast<std::int32_t>(cands.size());
            ws.ib[v] = slot;
            marked.push_back(v);
            cands.emplace_back();
            cands.back().node = v;
          }
          rec.slot = slot;
          paths.push_back(rec);
          Cand& cd = cands[slot];
          cd.score = std::max(cd.score, score);
          cd.conf = std::max(cd.conf, conf);
          cd.min_hops = std::min(cd.min_hops, h);
          std::int32_t ps = ws.ia[v];
          if (ps < 0) {
            ++cd.reach;
            ps = static_cast<std::int32_t>(per_start[si].size());
            ws.ia[v] = ps;
            per_start_seen[si].push_back(v);
            per_start[si].emplace_back(slot, score);
          } else {
            per_start[si][ps].second = std::max(per_start[si][ps].second, score);
          }
        }
      }
      if (h < wp.max_hops && node_ok(wp, wp.expand_node_types, v)) {
        const std::int64_t q = pick_edge(pair_of(), wp.expand_types, wp.num_type_flags, factor);
        if (q >= 0) {
          for (std::int32_t c = 0; c < h; ++c) w.nn.push_back(w.fn[pi * W + c]);
          w.nn.push_back(v);
          for (std::int32_t c = h + 1; c < W; ++c) w.nn.push_back(-1);
          for (std::int32_t c = 0; c + 1 < h; ++c) {
            w.ne.push_back(w.fe[pi * (W - 1) + c]);
            w.nf.push_back(w.ff[pi * (W - 1) + c]);
          }
          w.ne.push_back(q);
          w.nf.push_back(factor);
          for (std::int32_t c = h; c + 1 < W; ++c) {
            w.ne.push_back(-1);
            w.nf.push_back(1.0);
          }
        }
      }
    }
    for (node_t v : per_start_seen[si]) ws.ia[v] = -1;
    return used;
  };

  // Share the edge budget: each round gives every unfinished start an equal part of what is left
  // (strongest first); a start that finishes early leaves its part to the next rounds. So no start
  // is cut while the walk as a whole stays within max_edges.
  std::int64_t remaining = wp.max_edges;
  while (true) {
    std::vector<std::int32_t> open;
    for (std::int32_t si = 0; si < ns; ++si)
      if (!walks[si].done) open.push_back(si);
    if (open.empty()) break;
    if (remaining <= 0) {
      // A start that still has a visible entry to examine was cut; one that has none is done.
      for (std::int32_t si : open) {
        run(si, 0);
        if (!walks[si].done) res.cut_by_edges = true;
      }
      break;
    }
    const std::int64_t k = static_cast<std::int64_t>(open.size());
    for (std::size_t i = 0; i < open.size(); ++i) {
      const std::int64_t left = k - static_cast<std::int64_t>(i);
      const std::int64_t share = std::max<std::int64_t>(1, remaining / left);
      const std::int64_t used = run(open[i], std::min(share, remaining));
      res.edges_visited += used;
      remaining -= used;
      if (remaining <= 0) break;
    }
  }
  res.candidates_found = static_cast<std::int64_t>(cands.size());

  // The global order of candidates (by slot).
  auto before = [&](std::int32_t a, std::int32_t b) {
    const Cand& x = cands[a];
    const Cand& y = cands[b];
    if (x.score != y.score) return x.score > y.score;
    if (x.reach != y.reach) return x.reach > y.reach;
    if (x.conf != y.conf) return x.conf > y.conf;
    if (x.min_hops != y.min_hops) return x.min_hops < y.min_hops;
    return g.before(x.node, y.node);
  };
  const std::int64_t B = wp.max_candidates;
  std::vector<std::int32_t> kept;
  if (static_cast<std::int64_t>(cands.size()) <= B) {
    kept.resize(cands.size());
    std::iota(kept.begin(), kept.end(), 0);
  } else {
    res.cut_by_candidates = true;
    // Quotas over the starts that reached a candidate.
    std::vector<std::int32_t> active;
    double wsum = 0.0;
    for (std::int32_t si = 0; si < ns; ++si)
      if (!per_start[si].empty()) {
        active.push_back(si);
        wsum += order[si].second;
      }
    const std::int64_t n = static_cast<std::int64_t>(active.size());
    const std::int64_t guaranteed =
        static_cast<std::int64_t>(std::floor(wp.min_share * static_cast<double>(B) / n));
    const std::int64_t rest = B - guaranteed * n;
    std::vector<std::int64_t> quota(active.size(), guaranteed);
    std::vector<std::pair<double, std::int32_t>> frac;
    std::int64_t given = 0;
    for (std::size_t a = 0; a < active.size(); ++a) {
      const double exact = static_cast<double>(rest) * order[active[a]].second / wsum;
      const std::int64_t fl = std::min<std::int64_t>(rest, static_cast<std::int64_t>(std::floor(exact)));
      quota[a] += fl;
      given += fl;
      frac.emplace_back(exact - static_cast<double>(fl), static_cast<std::int32_t>(a));
    }
    std::stable_sort(frac.begin(), frac.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (std::size_t i = 0; given < rest && i < frac.size(); ++i, ++given) ++quota[frac[i].second];
    // Phase 1: each start its best untaken candidates, up to its quota.
    for (std::size_t a = 0; a < active.size(); ++a) {
      auto& lst = per_start[active[a]];
      std::sort(lst.begin(), lst.end(), [&](const auto& x, const auto& y) {
        if (x.second != y.second) return x.second > y.second;
        return before(x.first, y.first);
      });
      std::int64_t got = 0;
      for (const auto& item : lst) {
        if (got >= quota[a]) break;
        const node_t v = cands[item.first].node;
        if (ws.flag[v] & kTaken) continue;
        ws.flag[v] |= kTaken;
        kept.push_back(item.first);
        ++got;
      }
    }
    // Phase 2: fill what the quotas left, by the global order.
    if (static_cast<std::int64_t>(kept.size()) < B) {
      std::vector<std::int32_t> all(cands.size());
      std::iota(all.begin(), all.end(), 0);
      std::sort(all.begin(), all.end(), before);
      for (std::int32_t slot : all) {
        if (static_cast<std::int64_t>(kept.size()) >= B) break;
        if (ws.flag[cands[slot].node] & kTaken) continue;
        ws.flag[cands[slot].node] |= kTaken;
        kept.push_back(slot);
      }
    }
  }
  std::sort(kept.begin(), kept.end(), before);

  // Output: candidates and their best paths.
  auto path_before = [&](std::int64_t a, std::int64_t b) {
    const PathRec& x = paths[a];
    const PathRec& y = paths[b];
    if (x.score != y.score) return x.score > y.score;
    if (x.hops != y.hops) return x.hops < y.hops;
    const node_t* nx = &store_nodes[x.off * W];
    const node_t* ny = &store_nodes[y.off * W];
    for (std::int32_t c = 0; c < W; ++c)
      if (nx[c] != ny[c]) return g.before(nx[c], ny[c]);
    return a < b;
  };
  // Each candidate's paths in the order they were found, by a counting sort on the slot: slot s's
  // paths are grouped[ptr[s] .. ptr[s + 1]) (filled backwards from each slot's end).
  std::vector<std::int64_t>& ptr = scratch.by_slot_ptr;
  std::vector<std::int64_t>& grouped = scratch.by_slot;
  ptr.assign(cands.size() + 1, 0);
  for (const PathRec& p : paths) ++ptr[static_cast<std::size_t>(p.slot)];
  std::partial_sum(ptr.begin(), ptr.end(), ptr.begin());  // ptr[s]: the end of slot s's paths
  grouped.resize(paths.size());
  for (std::int64_t pidx = static_cast<std::int64_t>(paths.size()); pidx-- > 0;)
    grouped[static_cast<std::size_t>(--ptr[static_cast<std::size_t>(paths[pidx].slot)])] = pidx;
  res.path_count.reserve(kept.size());
  for (std::int32_t slot : kept) {
    Cand& cd = cands[slot];
    res.candidates.push_back(cd.node);
    res.scores.push_back(cd.score);
    res.reach.push_back(cd.reach);
    res.min_hops.push_back(cd.min_hops);
    std::int64_t* first = grouped.data() + ptr[static_cast<std::size_t>(slot)];
    std::int64_t* last = grouped.data() + ptr[static_cast<std::size_t>(slot) + 1];
    res.path_count.push_back(last - first);
    std::size_t take = static_cast<std::size_t>(last - first);
    if (wp.max_paths > 0 && take > static_cast<std::size_t>(wp.max_paths)) {
      take = static_cast<std::size_t>(wp.max_paths);
      std::partial_sort(first, first + take, last, path_before);
    } else {
      std::sort(first, last, path_before);
    }
    for (std::size_t i = 0; i < take; ++i) {
      const PathRec& p = paths[first[i]];
      for (std::int32_t c = 0; c < W; ++c) res.path_nodes.push_back(store_nodes[p.off * W + c]);
      for (std::int32_t c = 0; c + 1 < W; ++c) res.path_edges.push_back(store_edges[p.off * (W - 1) + c]);
      res.path_hops.push_back(p.hops);
      res.path_scores.push_back(p.score);
    }
    res.path_ptr.push_back(static_cast<std::int64_t>(res.path_hops.size()));
  }
  for (node_t v : marked) {
    ws.flag[v] = 0;
    ws.ia[v] = -1;
    ws.ib[v] = -1;
  }
  marked.clear();
  if (g.bad) throw InvalidArgument("typed_walk: a hop over a pair the delta's edges do not list");
  return res;
}

}  // namespace

WalkResult typed_walk(const CSRGraph& g, const Visibility& vis, std::int64_t nstarts, const node_t* starts,
                      const WalkParams& wp) {
  if (wp.node_type_tail) throw InvalidArgument("node_type_tail is a live graph's (a CSRGraph has none)");
  return walk_impl(CsrWalkGraph{g, wp.edge_weights}, vis, nstarts, starts, wp);
}

WalkResult typed_walk(const GraphRef& g, const WalkDeltaEdges& de, const Visibility& vis, std::int64_t nstarts,
                      const node_t* starts, const WalkParams& wp) {
  const node_t n = g.num_nodes();
  if (de.num_pairs < 0) throw InvalidArgument("edges: num_pairs must be >= 0");
  if (de.num_pairs > 0 && (!de.pair_keys || !de.pair_ptr || !de.typedir))
    throw InvalidArgument("edges: pair_keys, pair_ptr and typedir are required");
  if (de.first_id < g.base().num_edges())
    throw InvalidArgument("edges: first_id must be >= the base's edge count");
  std::int32_t prev = 0;
  for (std::int64_t i = 0; i < de.num_pairs; ++i) {
    const std::uint64_t key = de.pair_keys[i];
    const std::uint64_t lo = key >> 32, hi = key & 0xFFFFFFFFull;
    if (!(lo < hi && hi < static_cast<std::uint64_t>(n)))
      throw InvalidArgument("edges: pair " + std::to_string(i) + " is not (lo, hi) with lo < hi < num_nodes");
    if (i > 0 && !(de.pair_keys[i - 1] < key))
      throw InvalidArgument("edges: pair_keys must be strictly ascending");
    const std::int32_t a = de.pair_ptr[i], b = de.pair_ptr[i + 1];
    if (a != prev || b < a) throw InvalidArgument("edges: pair_ptr must start at 0 and not decrease");
    for (std::int32_t q = a; q < b; ++q)
      if (de.typedir[q] < 0) throw InvalidArgument("edges: a type code must be >= 0");
    prev = b;
  }
  if (wp.node_type && wp.node_type_tail && !(wp.node_type_split >= 0 && wp.node_type_split <= n))
    throw InvalidArgument("node_type_split out of range");
  const LiveWalkGraph lg(g, de, wp.edge_weights);
  return walk_impl(lg, vis, nstarts, starts, wp);
}

}  // namespace cw
