#include "conceptwalk/ppr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "conceptwalk/workspace.hpp"

namespace cw {

Workspace& thread_workspace(node_t n) {
  thread_local Workspace ws;
  ws.ensure(n);
  return ws;
}

namespace {

constexpr std::uint8_t kTouched = 1;
constexpr std::uint8_t kQueued = 2;

// One push run: owns the workspace for its lifetime and cleans the touched entries at the end.
class Pusher {
 public:
  Pusher(const CSRGraph& g, const Visibility& vis)
      : g_(g), vis_(vis), ws_(thread_workspace(g.num_nodes())) {
    ws_.touched.clear();
    ws_.queue.clear();
  }
  ~Pusher() {
    for (node_t u : ws_.touched) {
      ws_.p[u] = 0.0;
      ws_.r[u] = 0.0;
      ws_.flag[u] = 0;
    }
    ws_.touched.clear();
    ws_.queue.clear();
  }
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  void add_residual(node_t u, double w) {
    touch(u);
    ws_.r[u] += w;
  }

  // Enqueue every touched node that violates the eps condition (in touched order).
  void enqueue_violators(double eps) {
    for (node_t u : ws_.touched) maybe_enqueue(u, eps);
  }

  // Runs pushes until no node violates r(u) >= eps * deg(u) or the push budget is used up.
  // Returns false when the budget stopped it.
  bool run(double restart, double eps, std::int64_t max_pushes) {
    const offset_t* indptr = g_.indptr();
    const node_t* indices = g_.indices();
    std::size_t head = 0;
    while (head < ws_.queue.size()) {
      if (max_pushes > 0 && pushes_ >= max_pushes) {
        // Leave the remaining queued flags consistent for a later resume.
        for (std::size_t i = head; i < ws_.queue.size(); ++i) ws_.flag[ws_.queue[i]] &= ~kQueued;
        ws_.queue.clear();
        return false;
      }
      const node_t u = ws_.queue[head++];
      ws_.flag[u] &= ~kQueued;
      const double ru = ws_.r[u];
      const std::int32_t du = g_.degree(u, vis_);
      ++pushes_;
      if (du == 0) {  // no visible neighbour: the walk stays here (as with a self-loop)
        ws_.p[u] += ru;
        ws_.r[u] = 0.0;
        continue;
      }
      ws_.p[u] += restart * ru;
      ws_.r[u] = 0.0;
      const double share = (1.0 - restart) * ru / static_cast<double>(du);
      const offset_t b = indptr[u], e = indptr[u + 1];
      edge_visits_ += e - b;
      if (vis_.mask) {
        for (offset_t j = b; j < e; ++j) {
          const node_t v = indices[j];
          if (!vis_.mask[v]) continue;
          touch(v);
          ws_.r[v] += share;
          maybe_enqueue(v, eps);
        }
      } else {
        for (offset_t j = b; j < e; ++j) {
          const node_t v = indices[j];
          touch(v);
          ws_.r[v] += share;
          maybe_enqueue(v, eps);
        }
      }
      if (head > 4096 && head * 2 > ws_.queue.size()) {  // compact the FIFO
        ws_.queue.erase(ws_.queue.begin(), ws_.queue.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
    ws_.queue.clear();
    return true;
  }

  double residual_sum() const {
    double s = 0.0;
    for (node_t u : ws_.touched) s += ws_.r[u];
    return s;
  }

  // Nodes with p > 0 ordered by (p desc, index asc); top k if k > 0.
  void ranked(std::int64_t k, std::vector<node_t>& out) const {
    out.clear();
    for (node_t u : ws_.touched)
      if (ws_.p[u] > 0.0) out.push_back(u);
    const double* p = ws_.p.data();
    auto cmp = [p](node_t a, node_t b) { return p[a] != p[b] ? p[a] > p[b] : a < b; };
    if (k > 0 && static_cast<std::size_t>(k) < out.size()) {
      std::partial_sort(out.begin(), out.begin() + k, out.end(), cmp);
      out.resize(static_cast<std::size_t>(k));
    } else {
      std::sort(out.begin(), out.end(), cmp);
    }
  }

  // Is the top-k (set and order) proven exact at this eps? Uses the per-node bound
  // 0 <= p*(v) - p(v) <= min(eps * deg(v), R).
  bool certify(std::int64_t k, double eps, std::vector<node_t>& top) const {
    const double R = residual_sum();
    ranked(k, top);
    auto upper = [&](node_t v) {
      return ws_.p[v] + std::min(eps * static_cast<double>(g_.degree(v, vis_)), R);
    };
    for (std::size_t i = 0; i + 1 < top.size(); ++i) {
      const double lo = ws_.p[top[i]];
      const double up = upper(top[i + 1]);
      if (lo < up || (lo == up && top[i] > top[i + 1])) return false;
    }
    if (top.empty()) return true;
    // Every node outside the top-k: touched ones by their bound, untouched ones by min(eps*maxdeg, R).
    const double kth = ws_.p[top.back()];
    double outside = std::min(eps * static_cast<double>(g_.max_degree()), R);
    if (static_cast<std::int64_t>(top.size()) < k) {
      // Fewer than k nodes with p > 0: the set is exact only if nothing else can have mass.
      return outside <= 0.0;
    }
    // Mark top nodes via the touched flag bit 4 to skip them.
    for (node_t v : top) ws_.flag[v] |= 4;
    bool ok = outside <= kth;
    for (node_t u : ws_.touched) {
      if (!ok) break;
      if (ws_.flag[u] & 4) continue;
      const double up = upper(u);
      if (up > kth || (up == kth && u < top.back())) ok = false;
    }
    for (node_t v : top) ws_.flag[v] &= static_cast<std::uint8_t>(~4);
    return ok;
  }

  double score(node_t u) const { return ws_.p[u]; }
  std::int64_t pushes() const { return pushes_; }
  std::int64_t edge_visits() const { return edge_visits_; }

 private:
  void touch(node_t u) {
    if (!(ws_.flag[u] & kTouched)) {
      ws_.flag[u] |= kTouched;
      ws_.touched.push_back(u);
    }
  }
  void maybe_enqueue(node_t v, double eps) {
    if (ws_.flag[v] & kQueued) return;
    const double r = ws_.r[v];
    if (r <= 0.0) return;
    if (r >= eps * static_cast<double>(g_.degree(v, vis_))) {
      ws_.flag[v] |= kQueued;
      ws_.queue.push_back(v);
    }
  }

  const CSRGraph& g_;
  const Visibility& vis_;
  Workspace& ws_;
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

void seed(Pusher& pusher, std::int64_t nseeds, const node_t* seeds, const double* weights,
          double eps) {
  double total = 0.0;
  for (std::int64_t i = 0; i < nseeds; ++i) total += weights[i];
  for (std::int64_t i = 0; i < nseeds; ++i) pusher.add_residual(seeds[i], weights[i] / total);
  pusher.enqueue_violators(eps);
}

}  // namespace

namespace {
constexpr double kMinUncappedRestartEps = 1e-12;
}  // namespace

void validate_ppr(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                  const node_t* seeds, const double* weights, const PPRParams& params) {
  if (!(params.restart > 0.0 && params.restart < 1.0))
    throw InvalidArgument("restart must be in (0, 1), got " + std::to_string(params.restart));
  if (!(params.eps > 0.0) || !std::isfinite(params.eps))
    throw InvalidArgument("eps must be positive and finite, got " + std::to_string(params.eps));
  if (params.max_pushes < 0) throw InvalidArgument("max_pushes must be >= 0");
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
  if (nseeds <= 0) throw InvalidArgument("seeds must not be empty");
  double total = 0.0;
  for (std::int64_t i = 0; i < nseeds; ++i) {
    const node_t s = seeds[i];
    if (s < 0 || s >= g.num_nodes())
      throw NodeOutOfRange("seed index " + std::to_string(s) + " outside [0, " +
                           std::to_string(g.num_nodes()) + ")");
    if (!CSRGraph::visible(s, vis)) throw NodeOutOfRange("seed index " + std::to_string(s) + " is not visible");
    const double w = weights[i];
    if (!std::isfinite(w) || w < 0.0)
      throw InvalidArgument("seed weight must be finite and >= 0, got " + std::to_string(w));
    total += w;
  }
  if (!(total > 0.0) || !std::isfinite(total))
    throw InvalidArgument("seed weights must have a positive finite sum");
}

PPRResult personalized_pagerank(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                                const node_t* seeds, const double* weights,
                                const PPRParams& params, std::int64_t k) {
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  PPRResult res;
  Pusher pusher(g, vis);
  seed(pusher, nseeds, seeds, weights, params.eps);
  res.truncated = !pusher.run(params.restart, params.eps, params.max_pushes);
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
      res.truncated = !pusher.run(params.restart, eps, left);
    }
  }
  res.eps = eps;
  std::vector<node_t> order;
  pusher.ranked(k, order);
  fill_result(pusher, order, res);
  return res;
}

PPRResult personalized_pagerank_certified(const CSRGraph& g, const Visibility& vis,
                                          std::int64_t nseeds, const node_t* seeds,
                                          const double* weights, const PPRParams& params,
                                          std::int64_t k, double shrink, double min_eps) {
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  if (k <= 0) throw InvalidArgument("certified top-k needs k >= 1");
  if (!(shrink > 1.0) || !std::isfinite(shrink))
    throw InvalidArgument("shrink must be > 1, got " + std::to_string(shrink));
  if (!(min_eps > 0.0) || !std::isfinite(min_eps))
    throw InvalidArgument("min_eps must be positive and finite");
  if (params.max_pushes <= 0) throw InvalidArgument("certified mode needs max_pushes > 0");
  PPRResult res;
  Pusher pusher(g, vis);
  seed(pusher, nseeds, seeds, weights, params.eps);
  double eps = params.eps;
  std::vector<node_t> top;
  for (;;) {
    const std::int64_t left = params.max_pushes - pusher.pushes();
    const bool done = left > 0 && pusher.run(params.restart, eps, left);
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
  res.eps = eps;
  std::vector<node_t> order;
  pusher.ranked(k, order);
  fill_result(pusher, order, res);
  return res;
}

}  // namespace cw
