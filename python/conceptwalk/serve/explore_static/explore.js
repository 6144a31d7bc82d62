// conceptwalk explorer: one page, no library. Each view fetches one JSON endpoint (/api/<name>)
// and draws its answer as SVG made here. Text from the knowledge base is only ever set with
// textContent (never parsed as HTML). The URL's hash holds the view and its parameters, so the
// back button, a reload and a caller switch re-ask the same question.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const VIEWS = ["search", "context", "path", "suggest", "query", "node"];
  const AXES = ["authority", "fidelity", "extractionProvenance", "lifecycle"];
  // Every answer the page fetched, for the browser tests (and for a curious operator's console).
  window.cwFetched = [];

  const $ = (sel, root) => (root || document).querySelector(sel);
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "cls") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat()) if (kid !== null && kid !== undefined) e.append(kid);
    return e;
  }
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "text") e.textContent = v;
      else if (k === "cls") e.setAttribute("class", v);
      else e.setAttribute(k, String(v));
    }
    for (const kid of kids.flat()) if (kid) e.append(kid);
    return e;
  }
  const short = (s, n) => (s && s.length > n ? s.slice(0, n - 1) + "\u2026" : s || "");
  const fmt = (x) => (typeof x !== "number" ? String(x) : Number.isInteger(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(3));
  const label = (n) => n.title || n.id;

  // ------------------------------------------------------------------ routing
  function parseHash() {
    const h = location.hash.replace(/^#\/?/, "");
    const [view, qs] = h.split("?");
    return { view: VIEWS.includes(view) ? view : "search", params: new URLSearchParams(qs || "") };
  }
  function currentCaller() { return $("#caller").value || "0"; }
  function go(view, params) {
    const p = new URLSearchParams(params);
    p.set("caller", currentCaller());
    const next = "#/" + view + "?" + p.toString();
    if (location.hash === next) route(); else location.hash = next;
  }
  function nodeLink(id, text) {
    const p = new URLSearchParams({ id: id, caller: currentCaller() });
    return el("a", { href: "#/node?" + p.toString(), "data-node": id, text: text || id });
  }
  function openNode(id) { go("node", { id: id }); }

  async function api(name, params) {
    const p = new URLSearchParams(params);
    if (name !== "callers") p.set("caller", currentCaller());
    const url = "api/" + name + (p.toString() ? "?" + p.toString() : "");
    const resp = await fetch(url, { headers: { Accept: "application/json" } });
    const body = await resp.json();
    window.cwFetched.push({ url: url, status: resp.status, body: body });
    if (!resp.ok) throw new Error(body.error || resp.statusText);
    return body;
  }

  function setStatus(text, isError) {
    const s = $("#status");
    s.textContent = text;
    s.className = isError ? "error" : "";
  }

  let focusNext = null;  // a keyboard shortcut's target, focused once its view is shown
  function jump(view) {
    focusNext = `#view-${view} input`;
    if (parseHash().view === view) route(); else location.hash = "#/" + view;
  }

  async function route() {
    const { view, params } = parseHash();
    if (params.has("caller") && [...$("#caller").options].some((o) => o.value === params.get("caller"))) {
      $("#caller").value = params.get("caller");
    }
    for (const v of VIEWS) $("#view-" + v).hidden = v !== view;
    for (const a of document.querySelectorAll("nav a")) {
      if (a.dataset.view === view) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    }
    if (focusNext) { const f = $(focusNext); focusNext = null; if (f) f.focus(); }
    const form = $(`form[data-form="${view}"]`);
    const asked = [...params.keys()].some((k) => k !== "caller");
    // a question in the URL is the whole question: the form shows it, defaults where it is silent
    for (const input of form.querySelectorAll("input, select")) {
      const vals = params.getAll(input.name);
      if (vals.length) input.value = vals.join(", ");
      else if (asked && input.tagName === "SELECT") input.selectedIndex = Math.max(0, [...input.options].findIndex((o) => o.defaultSelected));
      else if (asked) input.value = input.defaultValue;
    }
    const answer = $("#answer");
    answer.replaceChildren();
    const asWho = () => $("#caller").selectedOptions[0]?.textContent || "";
    const ask = asked ? view : view === "search" ? "overview" : null;  // the search view starts with what the caller sees
    if (!ask) { setStatus(""); return; }
    setStatus("asking\u2026");
    try {
      const data = await api(ask, asked ? params : {});
      if (parseHash().view !== view) return;
      answer.replaceChildren(RENDER[ask](data));
      setStatus("as " + data.caller.label + " (" + data.caller.sees + ")");
    } catch (err) {
      answer.replaceChildren();
      setStatus(err.message + " \u2014 as " + asWho(), true);
    }
  }

  function formParams(form) {
    const params = [];
    for (const input of form.querySelectorAll("input, select")) {
      const v = input.value.trim();
      if (!v) continue;
      if (input.name === "concept" && form.dataset.form === "context") {
        for (const c of v.split(",")) if (c.trim()) params.push([input.name, c.trim()]);
      } else params.push([input.name, v]);
    }
    return params;
  }

  // ------------------------------------------------------------------ drawing
  const HOP_COLOUR = ["var(--seed)", "var(--hop1)", "var(--hop2)", "var(--hop3)"];
  function drawNode(g, n, x, y, r, colour, extra) {
    const node = svg("g", {
      cls: "node" + (extra && extra.seed ? " seed" : ""),
      "data-id": n.id, tabindex: 0, role: "link",
      "aria-label": (extra && extra.aria) || label(n) + " (" + n.id + ")",
      transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
    },
    svg("circle", { r: r.toFixed(1), fill: colour }),
    svg("title", { text: (extra && extra.tip) || n.id }),
    labelText(n, r, extra && extra.outward));
    node.addEventListener("click", () => openNode(n.id));
    node.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openNode(n.id); } });
    g.append(node);
    return node;
  }
  // a node's label below it, or (for a node on a ring) on the side away from the centre
  function labelText(n, r, outward) {
    if (!outward) return svg("text", { x: 0, y: r + 13, "text-anchor": "middle", text: short(label(n), 22) });
    const [ux, uy] = outward;
    const anchor = ux > 0.35 ? "start" : ux < -0.35 ? "end" : "middle";
    const d = r + 5;
    return svg("text", { x: (ux * d).toFixed(1), y: (uy * d + (uy > 0.35 ? 10 : uy < -0.35 ? -2 : 4)).toFixed(1), "text-anchor": anchor, text: short(label(n), 22) });
  }
  function away(p, cx, cy) {
    const dx = p[0] - cx, dy = p[1] - cy, len = Math.hypot(dx, dy);
    return len < 1 ? null : [dx / len, dy / len];
  }
  function drawing(w, h, name) {
    // never drawn larger than its own size (a short chain would fill the screen), smaller to fit
    const s = svg("svg", { cls: "drawing", viewBox: `0 0 ${w} ${h}`, role: "group", "aria-label": name, "data-drawing": name });
    s.style.maxWidth = w + "px";
    return s;
  }
  function line(g, a, b, cls, text) {
    g.append(svg("line", { cls: "edge " + (cls || ""), x1: a[0].toFixed(1), y1: a[1].toFixed(1), x2: b[0].toFixed(1), y2: b[1].toFixed(1) }));
    if (text) {
      g.append(svg("text", { cls: "edge-label", x: ((a[0] + b[0]) / 2).toFixed(1), y: ((a[1] + b[1]) / 2 - 5).toFixed(1), "text-anchor": "middle", text: text }));
    }
  }
  const edgeText = (edges) => edges.map((e) => e.type + (e.direction === "in" || e.direction === "backward" ? " \u2190" : " \u2192")).join(", ");

  // graph_context: seeds in the middle, results on rings by hop count, grouped by the seed
  // they are reached through; radius by score.
  function drawContext(data) {
    const res = data.result;
    const seedR = res.seeds.length > 1 ? 26 + 11 * res.seeds.length : 0;
    const ringGap = 88;
    // sized to the rings actually used (an answer with few hops is not drawn in a sea of white)
    const maxHop = Math.max(0, ...res.results.map((r) => Math.min(r.hops == null ? 3 : r.hops, 3)));
    const outer = Math.max(60, seedR + ringGap * maxHop - (seedR && maxHop ? 20 : 0));
    const W = Math.max(560, 2 * outer + 340), H = Math.max(300, 2 * outer * 0.82 + 110), cx = W / 2, cy = H / 2 - 12;
    const s = drawing(W, H, "context");
    const edges = svg("g"), nodes = svg("g");
    s.append(edges, nodes);
    const pos = {};
    const seeds = res.seeds;
    seeds.forEach((n, i) => {
      const a = (2 * Math.PI * i) / Math.max(seeds.length, 1);
      pos[n.id] = [cx + seedR * Math.cos(a), cy + seedR * 0.82 * Math.sin(a)];
    });
    const maxScore = Math.max(1e-12, ...res.results.map((r) => r.score));
    const rings = {};
    for (const r of res.results) (rings[Math.min(r.hops == null ? 3 : r.hops, 3)] ||= []).push(r);
    for (const [h, list] of Object.entries(rings)) {
      list.sort((a, b) => (a.via || "").localeCompare(b.via || "") || b.score - a.score || a.id.localeCompare(b.id));
      const radius = seedR + ringGap * Number(h) - (seedR ? 20 : 0) + (list.length > 24 ? 20 : 0);
      list.forEach((n, i) => {
        const a = (2 * Math.PI * i) / list.length - Math.PI / 2 + Number(h) * 0.3;
        pos[n.id] = [cx + radius * Math.cos(a), cy + radius * 0.82 * Math.sin(a)];
      });
    }
    for (const e of data.edges) if (pos[e.source] && pos[e.target]) line(edges, pos[e.source], pos[e.target]);
    for (const n of seeds) {
      drawNode(nodes, n, pos[n.id][0], pos[n.id][1], 14, HOP_COLOUR[0], { seed: true, outward: away(pos[n.id], cx, cy), tip: `${n.id}: seed (${n.source}, weight ${fmt(n.weight)})` });
    }
    for (const n of res.results) {
      const r = 5 + 15 * Math.sqrt(n.score / maxScore);
      const h = n.hops == null ? 3 : Math.min(n.hops, 3);
      drawNode(nodes, n, pos[n.id][0], pos[n.id][1], r, HOP_COLOUR[h], { outward: away(pos[n.id], cx, cy), tip: `${n.id}: score ${fmt(n.score)}, ${n.hops} hop(s) via ${n.via}` });
    }
    const legend = svg("g", { cls: "legend", transform: `translate(10,${H - 14})` });
    [["seed", 0], ["1 hop", 1], ["2 hops", 2], ["3+ / unreached", 3]].forEach(([t, c], i) => {
      legend.append(svg("circle", { cx: i * 105 + 8, cy: 0, r: 7, fill: HOP_COLOUR[c] }), svg("text", { x: i * 105 + 20, y: 4, text: t }));
    });
    legend.append(svg("text", { x: 440, y: 4, text: "size: score" }));
    s.append(legend);
    return s;
  }

  // a chain of nodes left to right, wrapping into rows, edge types on the links
  function drawChain(nodesList, steps, name) {
    const per = 4, gapX = 180, gapY = 110;
    const rows = Math.ceil(nodesList.length / per);
    const W = Math.min(nodesList.length, per) * gapX + 40, H = rows * gapY + 30;
    const s = drawing(Math.max(W, 300), H, name);
    const edges = svg("g"), nodes = svg("g");
    s.append(edges, nodes);
    const pos = nodesList.map((_, i) => {
      const row = Math.floor(i / per), col = row % 2 === 0 ? i % per : per - 1 - (i % per);
      return [col * gapX + 100, row * gapY + 45];
    });
    steps.forEach((st, i) => line(edges, pos[i], pos[i + 1], "path", st));
    nodesList.forEach((n, i) => drawNode(nodes, n, pos[i][0], pos[i][1], 13, i === 0 ? HOP_COLOUR[0] : i === nodesList.length - 1 ? HOP_COLOUR[2] : HOP_COLOUR[1], { seed: i === 0 }));
    return s;
  }

  // link_suggest: the concept left, shared neighbours in the middle, candidates right
  function drawSuggest(data) {
    const sugg = data.result.suggestions;
    const shared = [];
    const seen = new Set();
    for (const sg of sugg) for (const z of sg.shared) if (!seen.has(z.id)) { seen.add(z.id); shared.push(z); }
    const rows = Math.max(sugg.length, shared.length, 1);
    const gap = 44, H = rows * gap + 40, W = 760;
    const s = drawing(W, H, "suggest");
    const edges = svg("g"), nodes = svg("g");
    s.append(edges, nodes);
    const c = [90, H / 2];
    const yOf = (i, n) => 30 + ((i + 0.5) * (H - 50)) / n;
    const zp = {};
    shared.forEach((z, i) => { zp[z.id] = [380, yOf(i, shared.length)]; line(edges, c, zp[z.id]); });
    const maxScore = Math.max(1e-12, ...sugg.map((x) => x.score));
    sugg.forEach((sg, i) => {
      const p = [660, yOf(i, sugg.length)];
      for (const z of sg.shared) line(edges, zp[z.id], p);
      drawNode(nodes, sg, p[0], p[1], 5 + 12 * Math.sqrt(sg.score / maxScore), HOP_COLOUR[2], { tip: `${sg.id}: score ${fmt(sg.score)}, ${sg.shared.length} shared` });
    });
    shared.forEach((z) => drawNode(nodes, z, zp[z.id][0], zp[z.id][1], 8, "var(--shared)", { tip: z.id + ": shared neighbour" }));
    drawNode(nodes, data.concept, c[0], c[1], 15, HOP_COLOUR[0], { seed: true });
    return s;
  }

  // ------------------------------------------------------------------ the views
  function table(headers, rows) {
    return el("table", {}, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { text: h })))),
      el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", { cls: typeof c === "number" ? "num" : null, text: c === null || c === undefined ? "\u2014" : typeof c === "number" ? fmt(c) : String(c) })))))));
  }
  function summary(text, count) { return el("p", { cls: "summary", "data-count": count, text: text }); }

  const RENDER = {
    overview(d) {
      const types = Object.entries(d.types).map(([t, n]) => `${n} ${t}`).join(", ");
      return el("div", { "data-answer": "overview" },
        summary(`This caller sees ${d.nodes} node(s) and ${d.edges} edge(s)` + (types ? `: ${types}.` : "."), d.nodes),
        d.start.length ? el("p", {}, "Best linked, to start from: ", d.start.map((n) => el("span", { cls: "tag" }, nodeLink(n.id, label(n))))) : null);
    },
    search(d) {
      return el("div", { "data-answer": "search" },
        summary(`${d.count} hit(s) for \u201c${d.q}\u201d`, d.count),
        table(["#", "node", "type", "title", "BM25"], d.hits.map((h, i) => [i + 1, nodeLink(h.id), h.type, h.title, h.score])));
    },
    context(d) {
      const r = d.result;
      const extra = r.reason ? " \u2014 " + r.reason : "";
      return el("div", { "data-answer": "context" },
        summary(`${r.results.length} result(s) around ${r.seeds.length} seed(s), rank=${d.rank}${extra}`, r.results.length),
        el("div", { cls: "layout" },
          el("div", { cls: "panel" }, drawContext(d)),
          el("div", {},
            el("h3", { text: "Seeds" }),
            table(["seed", "from", "weight"], r.seeds.map((s) => [nodeLink(s.id, label(s)), s.source, s.weight])),
            el("h3", { text: "Results" }),
            table(["#", "node", "score", "hops", "reached through"].concat(d.rank === "coverage" ? ["coverage"] : []),
              r.results.map((x, i) => [i + 1, nodeLink(x.id, label(x)), x.score, x.hops, x.via ? nodeLink(x.via) : null].concat(d.rank === "coverage" ? [x.coverage] : []))))));
    },
    path(d) {
      const r = d.result;
      if (!r.found) return el("div", { "data-answer": "path" }, summary(`no path from ${r.source} to ${r.target} for this caller`, 0));
      const steps = r.steps.map((st) => edgeText(st.edges));
      return el("div", { "data-answer": "path" },
        summary(`${r.length} hop(s) from ${r.source} to ${r.target}`, r.nodes.length),
        el("div", { cls: "panel" }, drawChain(r.nodes, steps, "path")),
        el("h3", { text: "Steps" }),
        table(["from", "to", "edges"], r.steps.map((st) => [nodeLink(st.source), nodeLink(st.target), edgeText(st.edges)])));
    },
    suggest(d) {
      const r = d.result;
      return el("div", { "data-answer": "suggest" },
        summary(`${r.suggestions.length} suggestion(s) for ${label(d.concept)} (of ${r.candidates} candidate(s), at least ${r.minShared} shared)`, r.suggestions.length),
        el("div", { cls: "layout" },
          el("div", { cls: "panel" }, drawSuggest(d)),
          el("div", {}, table(["#", "suggested link", "score", "shared neighbours"],
            r.suggestions.map((x, i) => [i + 1, nodeLink(x.id, label(x)), x.score, el("span", {}, x.shared.map((z) => el("span", { cls: "tag" }, nodeLink(z.id, label(z)))))])))));
    },
    query(d) {
      const ev = d.event || {};
      const out = el("div", { "data-answer": "query" },
        summary(`${d.flat.length} flat result(s), then ${d.added.length} added by the walk`, d.flat.length + d.added.length),
        el("h3", { text: "Flat results (the caller's own search, first and unchanged)" }),
        table(["#", "node", "score"], d.flat.map((x, i) => [i + 1, nodeLink(x.id, x.title || x.id), x.score])),
        el("h3", { text: "Resolved concepts" }),
        d.concepts.length ? table(["concept", "id", "confidence", "method"], d.concepts.map((c) => [nodeLink(c.id, c.title || c.id), c.id, c.confidence, c.method])) : el("p", { cls: "absent", text: "no concept resolved" }),
        el("h3", { text: "Added by the concept walk" }));
      if (!d.added.length) out.append(el("p", { cls: "absent", text: "the walk added nothing" }));
      d.added.forEach((a, i) => {
        const box = el("div", { cls: "added", "data-added": a.id },
          el("p", {}, el("strong", { text: `${d.flat.length + i + 1}. ` }), nodeLink(a.id, label(a)), ` \u2014 walk score ${fmt(a.walkScore)}, ${a.hops} hop(s) from `, nodeLink(a.concept), `, ${a.pathCount} path(s)`));
        a.paths.forEach((p, j) => {
          const names = p.nodes.map((id) => ({ id: id, title: null }));
          box.append(el("p", { cls: "summary", text: `path ${j + 1}: score ${fmt(p.score)}` }),
            el("div", { cls: "panel" }, drawChain(names, p.hops.map((h) => h.type + (h.direction === "backward" ? " \u2190" : " \u2192")), "walk-path")),
            table(["hop", "edge"].concat(AXES), p.hops.map((h) => [`${h.from} \u2192 ${h.to}`, `${h.type} (${h.direction})`].concat(AXES.map((ax) => axisCell(h, ax))))));
        });
        out.append(box);
      });
      out.append(el("h3", { text: "Retrieval event" }), el("pre", { "data-event": "", text: JSON.stringify(ev, null, 2) }));
      return out;
    },
    node(d) {
      const out = el("div", { "data-answer": "node", "data-node-id": d.id },
        el("h3", { text: label(d) }),
        el("p", {}, el("span", { cls: "tag", text: d.type }), el("code", { text: d.id }), " \u2014 ",
          d.public ? "public" : "scopes you may know: " + (d.scopes.length ? d.scopes.join(", ") : "none")),
        d.body ? el("div", { cls: "body", text: d.body + (d.bodyTruncated ? " \u2026" : "") }) : el("p", { cls: "absent", text: "(no body)" }),
        el("h3", { text: `Neighbours you see (${d.degree})` }));
      if (!d.byEdgeType.length) out.append(el("p", { cls: "absent", text: "none visible" }));
      const titles = Object.fromEntries(d.neighbours.map((n) => [n.id, n]));
      for (const grp of d.byEdgeType) {
        out.append(el("h3", { text: `${grp.type} ${grp.direction === "out" ? "\u2192 (out)" : "\u2190 (in)"}` }),
          el("p", {}, grp.ids.map((id) => el("span", { cls: "tag" }, nodeLink(id, label(titles[id] || { id: id }))))));
      }
      out.append(el("p", {}, "Ask about it: ",
        el("a", { href: "#/context?" + new URLSearchParams({ concept: d.id, caller: currentCaller() }), text: "context" }), " \u00b7 ",
        el("a", { href: "#/suggest?" + new URLSearchParams({ concept: d.id, caller: currentCaller() }), text: "suggest" })));
      return out;
    },
  };

  function axisCell(hop, axis) {
    const absent = hop.absent || {};
    if (axis in hop) {
      const v = hop[axis];
      return typeof v === "object" && v !== null ? `${v.method ?? "\u2014"} ${v.confidence ?? ""}`.trim() : String(v);
    }
    const why = absent[axis] || Object.entries(absent).find(([k]) => k.startsWith(axis + "."))?.[1];
    return el("span", { cls: "absent", "data-absent": axis, text: why ? "absent (" + why.replace("absent-", "") + ")" : "absent" });
  }

  // ------------------------------------------------------------------ start
  async function start() {
    try {
      const data = await api("callers", {});
      const sel = $("#caller");
      sel.replaceChildren(...data.callers.map((c) => el("option", { value: c.index, text: c.label === c.sees ? c.label : `${c.label} \u2014 ${c.sees}` })));
    } catch (err) {
      setStatus("the explorer cannot list its callers: " + err.message, true);
      return;
    }
    $("#caller").addEventListener("change", () => {
      const { view, params } = parseHash();
      params.set("caller", currentCaller());
      location.hash = "#/" + view + "?" + params.toString();
    });
    for (const form of document.querySelectorAll("form[data-form]")) {
      form.addEventListener("submit", (ev) => { ev.preventDefault(); go(form.dataset.form, formParams(form)); });
    }
    document.addEventListener("keydown", (ev) => {
      const t = ev.target;
      if (ev.altKey || ev.ctrlKey || ev.metaKey || (t && /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName))) return;
      if (ev.key === "/") { ev.preventDefault(); jump("search"); }
      else if (ev.key === "c") { ev.preventDefault(); $("#caller").focus(); }
      else if (/^[1-6]$/.test(ev.key)) {
        ev.preventDefault();
        jump(VIEWS[Number(ev.key) - 1]);
      }
    });
    window.addEventListener("hashchange", route);
    await route();
    document.body.dataset.ready = "1";
  }
  document.addEventListener("DOMContentLoaded", start);
})();
