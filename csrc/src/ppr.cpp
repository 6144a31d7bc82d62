#include "conceptwalk/ppr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "conceptwalk/check.hpp"
#include "conceptwalk/workspace.hpp"

namespace cw {

namespace {

constexpr std::uint32_t kTouched = 1;
constexpr std::uint32_t kQueued = 2;
constexpr std::uint32_t kTop = 4;
constexpr std::uint32_t kSkip = 8;  // count_results: a seed or an excluded node (set and cleared there)

// Ranking: nodes by (p desc, id asc). For p > 0 the IEEE bit pattern of p grows with p, so
// the key ~bits(p) ascending is p descending, and (key, tie) ascending is the wanted order, where
// tie is the node's order key (GraphRef::order; the index itself without a delta): a strict total
// order (tie keys are distinct), so any correct sort gives the same sequence.
struct RankItem {
  std::uint64_t key;
  std::uint64_t tie;
  node_t u;
};

inline std::uint64_t rank_key(double p) {
  std::uint64_t bits;
  std::memcpy(&bits, &p, sizeof bits);
  return ~bits;
}

inline bool rank_less(const RankItem& a, const RankItem& b) {
  return a.key != b.key ? a.key < b.key : a.tie < b.tie;
}

std::vector<RankItem>& ws_rank_items() {
  thread_local std::vector<RankItem> items;
  return items;
}

// Sorts items by (key, u) ascending; with k > 0 only the first k need to be in place. A full sort
// distributes the items into up to 2048 buckets by the leading differing bits of the key (one
// counting pass, one scatter) and insertion-sorts each bucket, which holds a few items: a
// comparison sort of scores mispredicts about every other comparison.
void sort_ranked(std::vector<RankItem>& items, std::int64_t k) {
  const std::size_t n = items.size();
  if (k > 0 && static_cast<std::size_t>(k) < n) {
    std::partial_sort(items.begin(), items.begin() + k, items.end(), rank_less);
    return;
  }
  if (n < 64) {
    std::sort(items.begin(), items.end(), rank_less);
    return;
  }
  std::uint64_t kmin = items[0].key, kmax = items[0].key;
  for (const RankItem& it : items) {
    kmin = std::min(kmin, it.key);
    kmax = std::max(kmax, it.key);
  }
  if (kmin == kmax) {
    std::sort(items.begin(), items.end(), rank_less);
    return;
  }
  constexpr int kBits = 11;
  const int top = highest_bit(kmin ^ kmax);  // highest bit where keys differ
  const int shift = std::max(0, top + 1 - kBits);
  const std::uint64_t base = kmin >> shift;
  const std::size_t nb = static_cast<std::size_t>((kmax >> shift) - base) + 1;  // <= 2^kBits
  thread_local std::vector<RankItem> tmp;
  thread_local std::vector<std::uint32_t> start;
  tmp.resize(n);
  start.assign(nb + 1, 0);
  std::uint32_t* st = start.data();
  for (const RankItem& it : items) ++st[(it.key >> shift) - base + 1];
  for (std::size_t b = 0; b < nb; ++b) st[b + 1] += st[b];
  {
    thread_local std::vector<std::uint32_t> cur;
    cur.assign(start.begin(), start.end() - 1);
    std::uint32_t* c = cur.data();
    RankItem* t = tmp.data();
    for (const RankItem& it : items) t[c[(it.key >> shift) - base]++] = it;
  }
  RankItem* t = tmp.data();
  for (std::size_t b = 0; b < nb; ++b) {
    const std::uint32_t lo = st[b], hi = st[b + 1];
    for (std::uint32_t i = lo + 1; i < hi; ++i) {  // insertion sort of one small bucket
      const RankItem x = t[i];
      std::uint32_t j = i;
      while (j > lo && rank_less(x, t[j - 1])) {
        t[j] = t[j - 1];
        --j;
      }
      t[j] = x;
    }
  }
  items.swap(tmp);
}

// One push run: owns the workspace for its lifetime and cleans the touched entries at the end.
//
// Node state lives in one 32-byte PushNode per node (r, p, threshold eps*deg, degree, flags), so
// a neighbour visit touches one cache line besides the adjacency row. The queue is a FIFO ring
// and the touched list a flat array, both sized together (a power of two, grown on demand): a
// node is queued at most once at a time, so the ring never holds more than the touched count.
// The push order (FIFO, neighbours in row order) and every floating-point operation are those of
// the textbook loop, so results are bit-identical to it.
class Pusher {
 public:
  Pusher(const GraphRef& g, const Visibility& vis)
      : g_(g), vis_(vis), ws_(thread_workspace(g.num_nodes(), Workspace::kWorkspaceNodes)) {
    nd_ = ws_.node.data();
    touched_ = ws_.push_touched.data();
    ring_ = ws_.push_ring.data();
    cap_ = ws_.push_touched.size();
  }
  ~Pusher() {
    for (std::size_t i = 0; i < nt_; ++i) {
      PushNode& x = nd_[touched_[i]];
      x.r = 0.0;
      x.p = 0.0;
      x.flags = 0;
    }
  }
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  void add_residual(node_t u, double w) {
    touch(u, eps_);
    nd_[u].r += w;
  }

  // Set the threshold eps*deg of every touched node for this eps, then enqueue every touched
  // node that violates it (in touched order).
  void enqueue_violators(double eps) {
    eps_ = eps;
    for (std::size_t i = 0; i < nt_; ++i) {
      const node_t u = touched_[i];
      PushNode& x = nd_[u];
      x.thr = eps * static_cast<double>(x.deg);
      if (x.flags & kQueued) continue;
      if (x.r <= 0.0) continue;
      if (x.r >= x.thr) {
        x.flags |= kQueued;
        ring_[(qhead_ + qsize_) & (cap_ - 1)] = u;
        ++qsize_;
      }
    }
  }

  // Runs pushes until no node violates r(u) >= eps * deg(u) or a budget is used up: the pushes
  // done reach max_pushes (0: no cap), or the next push's row would take the edge visits past
  // max_visits (that push is not done; the nodes without visible neighbours still queued are
  // pushed, which reads nothing). Returns false when a budget stopped it.
  // enqueue_violators(eps) must have been called with the same eps since the last change of eps.
  bool run(double restart, double eps, std::int64_t max_pushes, std::int64_t max_visits) {
    eps_ = eps;
    // Prefetching pays once the node slots outgrow the caches (~2 MiB of slots); below that its
    // extra instructions cost more than it saves.
    if (g_.delta()) {  // a live graph's delta rows (validate_ppr refuses visible rows with one)
      if (g_.num_nodes() > (1 << 16)) {
        if (vis_.mask) return run_impl<kMask, true, true>(restart, eps, max_pushes, max_visits);
        return run_impl<kAll, true, true>(restart, eps, max_pushes, max_visits);
      }
      if (vis_.mask) return run_impl<kMask, false, true>(restart, eps, max_pushes, max_visits);
      return run_impl<kAll, false, true>(restart, eps, max_pushes, max_visits);
    }
    if (g_.num_nodes() > (1 << 16)) {
      if (vis_.mask && vis_.vindptr) return run_impl<kRows, true, false>(restart, eps, max_pushes, max_visits);
      if (vis_.mask) return run_impl<kMask, true, false>(restart, eps, max_pushes, max_visits);
      return run_impl<kAll, true, false>(restart, eps, max_pushes, max_visits);
    }
    if (vis_.mask && vis_.vindptr) return run_impl<kRows, false, false>(restart, eps, max_pushes, max_visits);
    if (vis_.mask) return run_impl<kMask, false, false>(restart, eps, max_pushes, max_visits);
    return run_impl<kAll, false, false>(restart, eps, max_pushes, max_visits);
  }

  // The eps the current state satisfies after a run that a budget stopped: the per-node bound
  // p*(v) - p(v) = deg(v) * sum_u ppr_v(u) * r(u) / deg(u) < eps' * deg(v) for eps' just above
  // max_u r(u) / deg(u) (and never below `eps`, the eps asked for); +inf when a node without
  // visible neighbours holds mass (its error is its residual: no eps bounds it).
  double satisfied_eps(double eps) const {
    double m = 0.0;
    for (std::size_t i = 0; i < nt_; ++i) {
      const PushNode& x = nd_[touched_[i]];
      if (!(x.r > 0.0)) continue;
      if (x.deg == 0) return std::numeric_limits<double>::infinity();
      m = std::max(m, x.r / static_cast<double>(x.deg));
    }
    return std::max(eps, std::nextafter(m, std::numeric_limits<double>::infinity()));
  }

  double residual_sum() const {
    double s = 0.0;
    for (std::size_t i = 0; i < nt_; ++i) s += nd_[touched_[i]].r;
    return s;
  }

  // Nodes with p > 0 ordered by (p desc, index asc); top k if k > 0.
  void ranked(std::int64_t k, std::vector<node_t>& out) const {
    std::vector<RankItem>& items = ws_rank_items();
    items.clear();
    const bool delta = g_.delta() != nullptr;
    for (std::size_t i = 0; i < nt_; ++i) {
      const node_t u = touched_[i];
      const double p = nd_[u].p;
      if (p > 0.0) items.push_back(RankItem{rank_key(p), delta ? g_.order(u) : static_cast<std::uint64_t>(u), u});
    }
    sort_ranked(items, k);
    const std::size_t m = k > 0 ? std::min(items.size(), static_cast<std::size_t>(k)) : items.size();
    out.resize(m);
    for (std::size_t i = 0; i < m; ++i) out[i] = items[i].u;
  }

  // Is the top-k (set and order) proven exact at this eps? Uses the per-node bound
  // 0 <= p*(v) - p(v) <= min(eps * deg(v), R).
  bool certify(std::int64_t k, double eps, std::vector<node_t>& top) const {
    const double R = residual_sum();
    ranked(k, top);
    auto upper = [&](node_t v) { return nd_[v].p + std::min(eps * static_cast<double>(g_.degree(v, vis_)), R); };
    for (std::size_t i = 0; i + 1 < top.size(); ++i) {
      const double lo = nd_[top[i]].p;
      const double up = upper(top[i + 1]);
      if (lo < up || (lo == up && g_.before(top[i + 1], top[i]))) return false;
    }
    if (top.empty()) return true;
    // Every node outside the top-k: touched ones by their bound, untouched ones by min(eps*maxdeg, R).
    const double kth = nd_[top.back()].p;
    double outside = std::min(eps * static_cast<double>(g_.max_degree()), R);
    if (static_cast<std::int64_t>(top.size()) < k) {
      // Fewer than k nodes with p > 0: the set is exact only if nothing else can have mass.
      return outside <= 0.0;
    }
    // Mark top nodes with the scratch bit to skip them.
    for (node_t v : top) nd_[v].flags |= kTop;
    bool ok = outside <= kth;
    for (std::size_t i = 0; i < nt_ && ok; ++i) {
      const node_t u = touched_[i];
      if (nd_[u].flags & kTop) continue;
      const double up = upper(u);
      if (up > kth || (up == kth && g_.before(u, top.back()))) ok = false;
    }
    for (node_t v : top) nd_[v].flags &= ~kTop;
    return ok;
  }

  // Fill mode: how many touched nodes count as results (p > 0, target's rule; seeds ascending),
  // and whether some touched node holds mass it never pushed (p == 0, r > 0).
  std::int64_t count_results(const FillTarget& t, std::int64_t nseeds, const node_t* seeds, bool& pending) const {
    std::int64_t c = 0;
    pending = false;
    // The seeds and the excluded nodes marked in their slots (a flag test per touched node, not
    // two binary searches), the marks cleared again below (an untouched slot's flags stay 0).
    for (std::int64_t i = 0; i < nseeds; ++i) nd_[seeds[i]].flags |= kSkip;
    for (std::int64_t i = 0; i < t.num_exclude; ++i) nd_[t.exclude[i]].flags |= kSkip;
    for (std::size_t i = 0; i < nt_; ++i) {
      const node_t u = touched_[i];
      const PushNode& x = nd_[u];
      if (x.p <= 0.0) {
        if (x.r > 0.0) pending = true;
        continue;
      }
      if (x.flags & kSkip) continue;
      if (!t.types.keeps(u)) continue;
      ++c;
    }
    for (std::int64_t i = 0; i < nseeds; ++i) nd_[seeds[i]].flags &= ~kSkip;
    for (std::int64_t i = 0; i < t.num_exclude; ++i) nd_[t.exclude[i]].flags &= ~kSkip;
    return c;
  }

  double score(node_t u) const { return nd_[u].p; }
  std::int64_t pushes() const { return pushes_; }
  std::int64_t edge_visits() const { return edge_visits_; }

 private:
  // kAll: every node visible; kMask: skip hidden neighbours by the mask; kRows: walk the rows
  // of the visible subgraph (same neighbours in the same order, without the hidden entries).
  enum Mode { kAll, kMask, kRows };

  // kDelta: rows (and degrees) through the graph's delta (GraphRef::row), never visible rows.
  template <Mode kMode, bool kPrefetch, bool kDelta>
  bool run_impl(const double restart, const double eps, const std::int64_t max_pushes,
                const std::int64_t max_visits) {
    constexpr bool kMasked = kMode != kAll;
    const offset_t* const indptr = g_.base().indptr();
    const offset_t* const rptr = kMode == kRows ? vis_.vindptr : indptr;
    const node_t* const indices = kMode == kRows ? vis_.vindices : g_.base().indices();
    const node_t base_n = g_.base().num_nodes();
    const std::uint8_t* const mask = vis_.mask;
    const std::int32_t* const vdeg = vis_.vdeg;
    PushNode* const nd = nd_;
    const double keep = 1.0 - restart;
    std::size_t head = qhead_, qsize = qsize_, nt = nt_, cmask = cap_ - 1;
    node_t* ring = ring_;
    node_t* touched = touched_;
    std::int64_t pushes = pushes_, visits = edge_visits_;
    bool finished = true;
    while (qsize != 0) {
      if (max_pushes > 0 && pushes >= max_pushes) {
        // Leave the remaining queued flags consistent for a later resume.
        for (; qsize != 0; --qsize, head = (head + 1) & cmask) nd[ring[head]].flags &= ~kQueued;
        finished = false;
        break;
      }
      // Software prefetch along the FIFO: the queue says which rows and node slots the next
      // pushes read (on a large graph each is a cache miss). Row offsets 8 pushes ahead, the row
      // 4 ahead, the node slots of the neighbours 2 ahead. Prefetches do not change results.
      if (kPrefetch && qsize > 8) {
        const node_t w = ring[(head + 8) & cmask];
        if (!kDelta || w < base_n) CW_PREFETCH(&rptr[w]);
        CW_PREFETCH(&nd[w]);
      }
      if (kPrefetch && qsize > 4) {
        const node_t w = ring[(head + 4) & cmask];
        if (kDelta) {
          const node_t* pb;
          const node_t* pe;
          g_.row(w, pb, pe);
          CW_PREFETCH(pb);
        } else {
          CW_PREFETCH(&indices[rptr[w]]);
        }
      }
      if (kPrefetch && qsize > 2) {
        const node_t w = ring[(head + 2) & cmask];
        const node_t* pb;
        const node_t* pe;
        if (kDelta) {
          g_.row(w, pb, pe);
        } else {
          pb = indices + rptr[w];
          pe = indices + rptr[w + 1];
        }
        for (; pb != pe; ++pb) {
          const node_t v = *pb;
          CW_PREFETCH(&nd[v]);
          // The degree is read on a first touch: fetch it too.
          if (kDelta && v >= base_n) continue;  // a new slot: its degree is in the delta
          if (kMasked)
            CW_PREFETCH(&vdeg[v]);
          else
            CW_PREFETCH(&indptr[v]);
        }
      }
      const node_t u = ring[head];
      head = (head + 1) & cmask;
      --qsize;
      PushNode& xu = nd[u];
      xu.flags &= ~kQueued;
      const double ru = xu.r;
      const std::int32_t du = xu.deg;
      const node_t* rb;
      const node_t* re;
      if (kDelta) {
        g_.row(u, rb, re);
      } else {
        rb = indices + rptr[u];
        re = indices + rptr[u + 1];
      }
      // entries of the full row, as counted everywhere
      const offset_t row = kDelta ? static_cast<offset_t>(re - rb) : indptr[u + 1] - indptr[u];
      if (du != 0 && row > max_visits - visits) {
        // The work budget: this push would read past it. It is not done (u keeps its residual);
        // the rest of the queue is dropped, its nodes without visible neighbours pushed (free).
        for (; qsize != 0; --qsize, head = (head + 1) & cmask) {
          PushNode& x = nd[ring[head]];
          x.flags &= ~kQueued;
          if (x.deg == 0 && (max_pushes == 0 || pushes < max_pushes)) {
            x.p += x.r;
            x.r = 0.0;
            ++pushes;
          }
        }
        finished = false;
        break;
      }
      ++pushes;
      if (du == 0) {  // no visible neighbour: the walk stays here (as with a self-loop)
        xu.p += ru;
        xu.r = 0.0;
        continue;
      }
      xu.p += restart * ru;
      xu.r = 0.0;
      const double share = keep * ru / static_cast<double>(du);
      visits += row;
      for (const node_t* jp = rb; jp != re; ++jp) {
        const node_t v = *jp;
        if (kMode == kMask && (kDelta ? !vis_.delta->visible(mask, v) : !mask[v])) continue;
        PushNode& x = nd[v];
        std::uint32_t f = x.flags;
        if (!(f & kTouched)) {
          // First touch: r is 0; record the visible degree and the threshold for this eps.
          const std::int32_t dv = kDelta    ? g_.degree(v, vis_)
                                  : kMasked ? vdeg[v]
                                            : static_cast<std::int32_t>(indptr[v + 1] - indptr[v]);
          x.deg = dv;
          x.thr = eps * static_cast<double>(dv);
          f = kTouched;
          touched[nt++] = v;
          if (nt == cmask) {  // keep a free slot in both arrays
            qhead_ = head;
            qsize_ = qsize;
            nt_ = nt;
            grow();
            head = qhead_;
            cmask = cap_ - 1;
            ring = ring_;
            touched = touched_;
          }
        }
        const double r = x.r + share;
        x.r = r;
        // A visible neighbour of a visible node has deg >= 1, so thr > 0 and r >= thr implies
        // r > 0 (the textbook loop's r <= 0 test never fires here). Branch-free: the outcome is
        // unpredictable on rotating queries; the ring slot is written unconditionally (it has
        // a free slot: cap > nt >= qsize) and the count advanced by the condition.
        const std::uint32_t enq = static_cast<std::uint32_t>(r >= x.thr) & ~(f >> 1) & 1u;
        ring[(head + qsize) & cmask] = v;
        qsize += enq;
        x.flags = f | (enq << 1);
      }
    }
    qhead_ = 0;
    qsize_ = 0;
    nt_ = nt;
    pushes_ = pushes;
    edge_visits_ = visits;
    return finished;
  }

  void touch(node_t u, double eps) {
    PushNode& x = nd_[u];
    if (!(x.flags & kTouched)) {
      x.flags |= kTouched;
      x.deg = g_.degree(u, vis_);
      x.thr = eps * static_cast<double>(x.deg);
      touched_[nt_++] = u;
      if (nt_ + 1 >= cap_) grow();
    }
  }

  // Doubles the touched list and the ring (unwrapping the ring so its head is at 0).
  CW_NOINLINE void grow() {
    const std::size_t cap = cap_ * 2;
    ws_.push_touched.resize(cap);
    std::vector<node_t> ring(cap);
    for (std::size_t i = 0; i < qsize_; ++i) ring[i] = ring_[(qhead_ + i) & (cap_ - 1)];
    ws_.push_ring.swap(ring);
    qhead_ = 0;
    cap_ = cap;
    touched_ = ws_.push_touched.data();
    ring_ = ws_.push_ring.data();
  }

  const GraphRef g_;
  const Visibility& vis_;
  Workspace& ws_;
  PushNode* nd_ = nullptr;
  node_t* touched_ = nullptr;
  node_t* ring_ = nullptr;
  std::size_t cap_ = 0, nt_ = 0, qhead_ = 0, qsize_ = 0;
  double eps_ = 0.0;
  std::int64_t pushes_ = 0;
  std::int64_t edge_visits_ = 0;
};

void fill_result(const Pusher& pusher, std::vector<node_t>& order, PPRResult& res) {
  res.nodes = std::move(order);
  res.scores.resize(res.nodes.size());
  for (std::size_t i = 0; i < res.nodes.size(); ++i) res.scores[i] = pusher.score(res.nodes[i]);
  res.residual = pusher.residual_sum();
  res.pushes = pusher.pushes();
  res.edge_visits = pusher.edge_visits();
}

void seed(Pusher& pusher, std::int64_t nseeds, const node_t* seeds, const double* weights, double eps) {
  double total = 0.0;
  for (std::int64_t i = 0; i < nseeds; ++i) total += weights[i];
  for (std::int64_t i = 0; i < nseeds; ++i) pusher.add_residual(seeds[i], weights[i] / total);
  pusher.enqueue_violators(eps);
}

}  // namespace

namespace {
constexpr double kMinUncappedRestartEps = 1e-12;
}  // namespace

void validate_ppr(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                  const double* weights, const PPRParams& params) {
  if (!(params.restart > 0.0 && params.restart < 1.0))
    throw InvalidArgument("restart must be in (0, 1), got " + std::to_string(params.restart));
  if (!(params.eps > 0.0) || !std::isfinite(params.eps))
    throw InvalidArgument("eps must be positive and finite, got " + std::to_string(params.eps));
  if (params.max_pushes < 0) throw InvalidArgument("max_pushes must be >= 0");
  if (params.max_visits < 1)
    throw InvalidArgument("the push's max_visits must be >= 1, got " + std::to_string(params.max_visits));
  if (!(params.max_residual >= 0.0) || !std::isfinite(params.max_residual))
    throw InvalidArgument("max_residual must be >= 0 and finite, got " + std::to_string(params.max_residual));
  // An uncapped push does up to 1/(restart*eps) pushes (each moves >= restart*eps mass into p):
  // refuse a bound past 1e12 (e.g. restart = 1e-300 never finishes) instead of hanging.
  if (params.max_pushes == 0 && params.restart * params.eps < kMinUncappedRestartEps) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "restart * eps must be >= 1e-12 without a push cap (the push does up to "
                  "1/(restart*eps) pushes), got restart=%g eps=%g; raise them or set max_pushes",
                  params.restart, params.eps);
    throw InvalidArgument(buf);
  }
  if (g.delta() && (vis.vindptr || (vis.mask && !vis.delta)))
    throw InvalidArgument("a graph with a delta reads a mask with its delta's part (a LiveVisibility)");
  if (vis.delta && (!g.delta() || vis.delta->base_n != g.delta()->base_n))
    throw InvalidArgument("visible: a LiveVisibility of another graph");
  if (nseeds <= 0) throw InvalidArgument("seeds must not be empty");
  double total = 0.0;
  for (std::int64_t i = 0; i < nseeds; ++i) {
    check_node(g, vis, seeds[i], "seed");
    const double w = weights[i];
    if (!std::isfinite(w) || w < 0.0)
      throw InvalidArgument("seed weight must be finite and >= 0, got " + std::to_string(w));
    total += w;
  }
  if (!(total > 0.0) || !std::isfinite(total))
    throw InvalidArgument("seed weights must have a positive finite sum");
}

PPRResult personalized_pagerank(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                                const double* weights, const PPRParams& params, std::int64_t k) {
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  PPRResult res;
  Pusher pusher(g, vis);
  seed(pusher, nseeds, seeds, weights, params.eps);
  res.truncated = !pusher.run(params.restart, params.eps, params.max_pushes, params.max_visits);
  double eps = params.eps;
  if (params.max_residual > 0.0) {
    // Lower eps until the exact L1 error (the residual mass) meets the target; never below the
    // eps an uncapped push may use, and within the push budget.
    while (!res.truncated && pusher.residual_sum() > params.max_residual) {
      if (params.max_pushes == 0 && params.restart * eps * 0.5 < kMinUncappedRestartEps) {
        res.truncated = true;
        break;
      }
      eps *= 0.5;
      pusher.enqueue_violators(eps);
      const std::int64_t left = params.max_pushes > 0 ? params.max_pushes - pusher.pushes() : 0;
      if (params.max_pushes > 0 && left <= 0) {
        res.truncated = true;
        break;
      }
      res.truncated = !pusher.run(params.restart, eps, left, params.max_visits);
    }
  }
  res.eps = res.truncated ? pusher.satisfied_eps(eps) : eps;
  std::vector<node_t> order;
  pusher.ranked(k, order);
  fill_result(pusher, order, res);
  return res;
}

PPRResult personalized_pagerank_fill(const GraphRef& g, const Visibility& vis, std::int64_t nseeds,
                                     const node_t* seeds, const double* weights, const PPRParams& params,
                                     std::int64_t k_rank, const FillTarget& target) {
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  PPRResult res;
  Pusher pusher(g, vis);
  seed(pusher, nseeds, seeds, weights, params.eps);
  res.truncated = !pusher.run(params.restart, params.eps, 0, params.max_visits);
  double eps = params.eps;
  for (int halvings = 0;; ++halvings) {
    bool pending = false;
    res.results = pusher.count_results(target, nseeds, seeds, pending);  // of the final state
    if (res.truncated) {  // the work budget cut the round: no lower eps is tried
      res.fill_spent = res.results < target.k;
      break;
    }
    if (res.results >= target.k || !pending) break;
    if (pusher.pushes() >= kFillPushes || halvings >= kFillHalvings ||
        params.restart * eps * 0.5 < kMinUncappedRestartEps) {
      res.fill_spent = true;
      break;
    }
    eps *= 0.5;
    pusher.enqueue_violators(eps);
    res.truncated = !pusher.run(params.restart, eps, 0, params.max_visits);
  }
  res.eps = res.truncated ? pusher.satisfied_eps(eps) : eps;
  std::vector<node_t> order;
  pusher.ranked(k_rank, order);
  fill_result(pusher, order, res);
  return res;
}

PPRResult personalized_pagerank_certified(const GraphRef& g, const Visibility& vis, std::int64_t nseeds,
                                          const node_t* seeds, const double* weights, const PPRParams& params,
                                          std::int64_t k, double shrink, double min_eps) {
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  if (k <= 0) throw InvalidArgument("certified top-k needs k >= 1");
  if (!(shrink > 1.0) || !std::isfinite(shrink))
    throw InvalidArgument("shrink must be > 1, got " + std::to_string(shrink));
  if (!(min_eps > 0.0) || !std::isfinite(min_eps)) throw InvalidArgument("min_eps must be positive and finite");
  if (params.max_pushes <= 0) throw InvalidArgument("certified mode needs max_pushes > 0");
  PPRResult res;
  Pusher pusher(g, vis);
  seed(pusher, nseeds, seeds, weights, params.eps);
  double eps = params.eps;
  std::vector<node_t> top;
  for (;;) {
    const std::int64_t left = params.max_pushes - pusher.pushes();
    const bool done = left > 0 && pusher.run(params.restart, eps, left, params.max_visits);
    if (!done) {
      res.truncated = true;
      break;
    }
    if (pusher.certify(k, eps, top)) {
      res.certified = true;
      break;
    }
    if (eps <= min_eps) break;
    eps = std::max(eps / shrink, min_eps);
    pusher.enqueue_violators(eps);
  }
  res.eps = res.truncated ? pusher.satisfied_eps(eps) : eps;
  std::vector<node_t> order;
  pusher.ranked(k, order);
  fill_result(pusher, order, res);
  return res;
}

}  // namespace cw
