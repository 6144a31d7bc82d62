"""The local explorer: a read-only web page that draws each answer for a configured caller.

``conceptwalk explore KB`` serves it (:func:`serve_explorer`); :class:`Explorer` is what the page's
JSON endpoints answer from, usable without HTTP. Every answer comes from the same public
functions as the API -- :func:`~conceptwalk.tools.graph_context`,
:func:`~conceptwalk.tools.link_suggest`, :func:`~conceptwalk.tools.graph_path`,
:class:`~conceptwalk.wrap.ConceptAnchoredRetriever` and
:meth:`~conceptwalk.kb.KnowledgeBase.search` -- for one of the callers the operator configured
(chosen by its position, ``caller=N``; the page never sees a token). What the page adds for
drawing (the titles of the nodes drawn, the edges among them, a node's neighbours by edge
type) is read from the same graph under the same caller's mask, so every endpoint equals its
answer on the store with the caller's hidden nodes deleted (``tests/test_explore.py``).

Nothing here writes: the command opens the store read-only, and the HTTP app answers GET (and
HEAD) only.

The page (``explore_static/``: one HTML file, one script, one style sheet, no library) draws
with SVG made by its own script: the answers are small (tens of nodes) and their layouts are
structural -- rings by hop count around the seeds, a chain, a bipartite fan of shared
neighbours -- so a few hundred lines of our own draw them deterministically (the same answer,
the same picture), offline, with nothing to vendor, and every drawn node carries its id in
the DOM for the browser tests to read.

The HTTP app needs starlette and uvicorn (``pip install 'conceptwalk[explore]'``; the ``mcp``
extra brings both too): they are imported lazily, so this module imports without them.

Examples
--------
>>> from conceptwalk import Caller
>>> from conceptwalk.kb.store import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "auth", "type": "CONCEPT", "title": "Authentication"},
...                   {"id": "jwt", "type": "FILE", "title": "jwt.py", "scopes": ["team-a"]},
...                   {"id": "login", "type": "CONCEPT", "title": "Login"}])
>>> _ = kb.add_edges([{"src": "auth", "dst": "jwt", "type": "IMPLEMENTED_BY"},
...                   {"src": "auth", "dst": "login", "type": "RELATED_TO"}])
>>> ex = Explorer(kb, [("public", Caller.public()), ("team-a", Caller.with_scopes("team-a"))])
>>> [n["id"] for n in ex.answer("node", {"id": ["auth"], "caller": ["0"]})["neighbours"]]
['login']
>>> [n["id"] for n in ex.answer("node", {"id": ["auth"], "caller": ["1"]})["neighbours"]]
['jwt', 'login']
>>> ex.answer("node", {"id": ["jwt"], "caller": ["0"]})
Traceback (most recent call last):
...
conceptwalk.errors.NotFoundError: id not found: 'jwt'
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np

from ..errors import ConceptwalkError, InputError, NotFoundError, shown
from ..graph import Caller
from ._net import is_loopback as loopback

__all__ = [
    "Explorer",
    "ENDPOINTS",
    "EXPLORE_INSTALL_HINT",
    "build_app",
    "loopback",
    "require_explore",
    "serve_explorer",
    "static_files",
]

#: What to install for the HTTP app.
EXPLORE_INSTALL_HINT = "pip install 'conceptwalk[explore]'"

#: The most neighbours a node page lists (the rest are counted).
NODE_NEIGHBOURS = 500
#: The most characters of a body a node page shows.
NODE_BODY_CHARS = 20_000

_INT = "int"
_STR = "str"
_LIST = "list"

#: endpoint -> {parameter: (kind, default, (lo, hi) for ints / allowed values for strs)}
ENDPOINTS: dict[str, dict[str, tuple[str, Any, Any]]] = {
    "callers": {},
    "overview": {},
    "search": {"q": (_STR, None, None), "k": (_INT, 20, (1, 200)), "type": (_LIST, (), None)},
    "node": {"id": (_STR, None, None)},
    "context": {
        "question": (_STR, "", None),
        "concept": (_LIST, (), None),
        "k": (_INT, 20, (1, 200)),
        "rank": (_STR, "ppr", ("ppr", "coverage")),
        "max_hops": (_INT, 2, (1, 3)),
        "n_hits": (_INT, 10, (1, 100)),
        "type": (_LIST, (), None),
    },
    "path": {"source": (_STR, None, None), "target": (_STR, None, None)},
    "suggest": {"concept": (_STR, None, None), "k": (_INT, 10, (1, 100)), "min_shared": (_INT, 2, (1, 1000))},
    "query": {"text": (_STR, None, None), "k": (_INT, 10, (1, 100))},
}


def _caller_label(caller: Caller) -> str:
    if caller.sees_everything:
        return "all access"
    if not caller.scopes:
        return "public"
    return "scopes: " + ", ".join(sorted(caller.scopes))


class Explorer:
    """The explorer's answers, one JSON-ready dict per endpoint, for a configured caller.

    Parameters
    ----------
    kb : KnowledgeBase
        The store (opened read-only by ``conceptwalk explore``).
    callers : sequence of (str, Caller)
        The callers the page may switch among, with their labels; the first is the default.
        At least one. There is no implicit all-access caller: the operator lists it
        (``--scopes '*'``) or it is not there.
    walk_config : WalkConfig, optional
        The wrapped query's configuration (default :class:`~conceptwalk.wrap.WalkConfig` ``()``).

    Raises
    ------
    InputError
        No callers, or one that is not a :class:`~conceptwalk.Caller`.

    Examples
    --------
    >>> from conceptwalk import Caller
    >>> from conceptwalk.kb.store import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}, {"id": "b", "title": "Walks"}])
    >>> ex = Explorer(kb, [("public", Caller.public())])
    >>> ex.answer("callers", {})["callers"]
    [{'index': 0, 'label': 'public', 'sees': 'public'}]
    >>> [h["id"] for h in ex.answer("search", {"q": ["walks"]})["hits"]]
    ['b', 'a']
    >>> ex.answer("search", {"q": ["walks"], "k": ["zero"]})
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: search: k must be an integer in [1, 200], got 'zero'
    """

    def __init__(self, kb: Any, callers: Sequence[tuple[str, Caller]], *, walk_config: Any = None) -> None:
        listed = list(callers)
        if not listed:
            raise InputError("explore: give at least one caller")
        for i, item in enumerate(listed):
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Caller)):
                raise InputError(f"explore: callers[{i}] must be a (label, Caller) pair, got {shown(item)}")
        self.kb = kb
        self.callers: list[tuple[str, Caller]] = [(str(label), c) for label, c in listed]
        self.walk_config = walk_config
        self._retriever: Any = None
        self._lock = threading.Lock()  # the wrap's caches are not promised to be thread-safe
        self._answers: dict[str, Callable[[Caller, dict[str, Any]], dict[str, Any]]] = {
            "overview": self._overview,
            "search": self._search,
            "node": self._node,
            "context": self._context,
            "path": self._path,
            "suggest": self._suggest,
            "query": self._query,
        }

    # ------------------------------------------------------------------ the one entry point
    def answer(self, endpoint: str, params: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """The answer of one endpoint to the query parameters of a request.

        Parameters
        ----------
        endpoint : str
            One of :data:`ENDPOINTS` (``callers``, ``search``, ``node``, ``context``, ``path``,
            ``suggest``, ``query``).
        params : mapping of str to sequence of str
            The request's parameters as given (every value a string; a parameter may repeat
            only where it is a list: ``concept``, ``type``). ``caller`` is the position of a
            configured caller (default 0).

        Returns
        -------
        dict
            JSON-ready; every answer but ``callers`` carries ``caller`` (its index and label).

        Raises
        ------
        InputError
            An unknown endpoint or parameter, a missing or malformed value, an unknown caller.
        NotFoundError
            An id that is unknown or hidden from the caller (the same text for both).
        """
        spec = ENDPOINTS.get(endpoint)
        if spec is None:
            raise InputError(f"explore: unknown endpoint {shown(endpoint)} (one of: {', '.join(ENDPOINTS)})")
        args = self._parse(endpoint, spec, params)
        if endpoint == "callers":
            return {"callers": [self._caller_info(i) for i in range(len(self.callers))]}
        index = args.pop("caller")
        caller = self.callers[index][1]
        with self._lock:
            out = self._answers[endpoint](caller, args)
        return {"caller": self._caller_info(index), **out}

    def _caller_info(self, i: int) -> dict[str, Any]:
        label, caller = self.callers[i]
        return {"index": i, "label": label, "sees": _caller_label(caller)}

    def _parse(self, endpoint: str, spec: dict[str, tuple[str, Any, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        allowed = dict(spec)
        if endpoint != "callers":
            allowed["caller"] = (_INT, 0, (0, len(self.callers) - 1))
        args: dict[str, Any] = {}
        for name, values in params.items():
            if name not in allowed:
                takes = ", ".join(allowed) or "no parameters"
                raise InputError(f"{endpoint}: unknown parameter {shown(name)} (it takes: {takes})")
            vals = [values] if isinstance(values, str) else list(values)
            kind = allowed[name][0]
            if kind != _LIST and len(vals) != 1:
                raise InputError(f"{endpoint}: {name} must be given once, got {len(vals)} values")
            if not all(isinstance(v, str) for v in vals):
                raise InputError(f"{endpoint}: {name} must be text")
            args[name] = vals
        out: dict[str, Any] = {}
        for name, (kind, default, limits) in allowed.items():
            if name not in args:
                if default is None:
                    raise InputError(f"{endpoint}: missing parameter {name!r}")
                out[name] = default
                continue
            vals = args[name]
            if kind == _LIST:
                items = [v for v in vals if v.strip()]
                if any(len(v) > 10_000 for v in items) or len(items) > 200:
                    raise InputError(f"{endpoint}: {name}: at most 200 values of at most 10000 characters")
                out[name] = tuple(items)
            elif kind == _INT:
                lo, hi = limits
                text = vals[0].strip()
                if not (text.isascii() and text.lstrip("-").isdigit() and len(text) < 12 and lo <= int(text) <= hi):
                    what = "caller" if name == "caller" else name
                    raise InputError(f"{endpoint}: {what} must be an integer in [{lo}, {hi}], got {shown(vals[0])}")
                out[name] = int(text)
            else:
                v = vals[0]
                if len(v) > 10_000:
                    raise InputError(f"{endpoint}: {name} is longer than 10000 characters")
                if limits is not None and v not in limits:
                    raise InputError(f"{endpoint}: {name} must be one of {', '.join(limits)}, got {shown(v)}")
                if default is None and not v.strip():
                    raise InputError(f"{endpoint}: {name} must not be empty")
                out[name] = v
        return out

    # ------------------------------------------------------------------ helpers
    def _graph(self) -> Any:
        return self.kb.graph()

    @staticmethod
    def _brief(g: Any, i: int) -> dict[str, Any]:
        nid, ntype, title = g.node_at(i)
        return {"id": nid, "type": ntype, "title": title}

    @staticmethod
    def _edge_types(g: Any, i: int, j: int) -> list[dict[str, str]]:
        """The edges joining nodes i and j, as (type, direction seen from i), sorted."""
        names = g.edge_type_names
        got = {
            (names[int(g.edge_type_codes[e])], "out" if int(g.edge_src[e]) == i else "in")
            for e in g.edges_between(i, j)
        }
        return [{"type": t, "direction": d} for t, d in sorted(got)]

    def _edges_among(self, g: Any, ids: Sequence[str], vm: Any) -> list[dict[str, Any]]:
        """The undirected pairs among ``ids`` (all visible) that are linked, with their edge types
        (direction from ``source``), in id order."""
        idx = sorted({g.id_index[x] for x in ids})
        have = np.asarray(idx, dtype=np.int64)
        ip, ind = g.core.indptr, g.core.indices
        out = []
        for i in idx:
            nb = np.asarray(ind[int(ip[i]) : int(ip[i + 1])], dtype=np.int64)
            nb = nb[nb > i]
            if vm is not None:
                nb = nb[vm.mask[nb]]
            for j in np.intersect1d(nb, have, assume_unique=True).tolist():
                a, b = g.ids[i], g.ids[j]
                out.append({"source": a, "target": b, "edges": self._edge_types(g, i, j)})
        return out

    # ------------------------------------------------------------------ the answers
    def _overview(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        """What this caller sees: node and edge counts, nodes per type, the best-linked nodes
        (visible degree, then id) as places to start."""
        try:
            g = self._graph()
        except InputError:  # an empty store has no graph
            return {"nodes": 0, "edges": 0, "types": {}, "start": []}
        vm = caller.visibility(g)
        n = g.num_nodes
        seen = np.ones(n, dtype=bool) if vm is None else np.asarray(vm.mask, dtype=bool)
        deg = np.asarray(g.degrees if vm is None else vm.visible_degrees, dtype=np.int64)
        src, dst = np.asarray(g.edge_src), np.asarray(g.edge_dst)
        codes = np.asarray(g.node_type_codes)
        types = {g.node_type_names[int(c)]: int(k) for c, k in zip(*np.unique(codes[seen], return_counts=True))}
        order = sorted(np.flatnonzero(seen).tolist(), key=lambda i: (-int(deg[i]), g.ids[i]))[:8]
        return {
            "nodes": int(seen.sum()),
            "edges": int((seen[src] & seen[dst]).sum()),
            "types": dict(sorted(types.items())),
            "start": [{**self._brief(g, i), "degree": int(deg[i])} for i in order],
        }

    def _search(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        hits = self.kb.search(a["q"], a["k"], caller=caller, node_types=a["type"] or None)
        listed = []
        if hits:
            g = self._graph()
            listed = [{**self._brief(g, g.id_index[h]), "score": s} for h, s in hits]
        return {"q": a["q"], "k": a["k"], "types": list(a["type"]), "hits": listed, "count": len(listed)}

    def _node(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        g = self._graph()
        vm = caller.visibility(g)
        i = g.index(a["id"], visible=vm, argument="id")  # hidden and missing: the same error
        node = self._brief(g, i)
        scopes = g.node_scopes_at(i)
        known = sorted(scopes) if caller.scopes is None else sorted(set(scopes) & caller.scopes)
        row = self.kb.node(node["id"]) if callable(getattr(self.kb, "node", None)) else None
        body = None if row is None else row.get("body")
        nbrs = [g.id_index[x] for x in g.neighbors(node["id"], visible=vm)]
        listed = []
        groups: dict[tuple[str, str], list[str]] = {}
        for j in nbrs[:NODE_NEIGHBOURS]:
            edges = self._edge_types(g, i, j)
            listed.append({**self._brief(g, j), "edges": edges})
            for e in edges:
                groups.setdefault((e["type"], e["direction"]), []).append(g.ids[j])
        return {
            **node,
            "body": None if body is None else body[:NODE_BODY_CHARS],
            "bodyTruncated": body is not None and len(body) > NODE_BODY_CHARS,
            "scopes": known,
            "public": not scopes,
            "degree": len(nbrs),
            "neighbours": listed,
            "neighboursTruncated": len(nbrs) > NODE_NEIGHBOURS,
            "byEdgeType": [{"type": t, "direction": d, "ids": ids} for (t, d), ids in sorted(groups.items())],
        }

    def _context(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        from ..tools import graph_context

        question = a["question"] if a["question"].strip() else None
        if question is None and not a["concept"]:
            raise InputError("context: give a question, at least one concept, or both")
        res = graph_context(
            self.kb,
            question,
            concepts=a["concept"],
            k=a["k"],
            caller=caller,
            node_types=a["type"] or None,
            n_hits=a["n_hits"],
            rank=a["rank"],
            max_hops=a["max_hops"],
        )
        out = res.to_dict()
        g = self._graph()
        vm = caller.visibility(g)
        drawn = [s["id"] for s in out["seeds"]] + [r["id"] for r in out["results"]]
        return {
            "question": question,
            "concepts": list(a["concept"]),
            "rank": a["rank"],
            "result": out,
            "edges": self._edges_among(g, drawn, vm),
        }

    def _path(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        from ..tools import graph_path

        return {"result": graph_path(self.kb, a["source"], a["target"], caller=caller).to_dict()}

    def _suggest(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        from ..tools import link_suggest

        res = link_suggest(self.kb, a["concept"], k=a["k"], caller=caller, min_shared=a["min_shared"])
        g = self._graph()
        return {"concept": self._brief(g, g.id_index[a["concept"]]), "result": res.to_dict()}

    def _query(self, caller: Caller, a: dict[str, Any]) -> dict[str, Any]:
        r = self._wrap()
        got = r.run(a["text"], a["k"], concept_walk=True, caller=caller)
        event = got.event or {}
        n_flat = int(event.get("flatCount", len(got.results)))
        return {
            "text": a["text"],
            "k": a["k"],
            "flat": got.results[:n_flat],
            "added": got.results[n_flat:],
            "concepts": [{**c.to_dict(), "title": self._graph().title(c.id)} for c in got.concepts],
            "event": event,
        }

    def _wrap(self) -> Any:
        if self._retriever is None:
            from ..wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search

            cfg = self.walk_config if self.walk_config is not None else WalkConfig()
            # every call passes its caller; the flat search's own default is public only
            flat = builtin_flat_search(self.kb, caller=Caller.public())
            self._retriever = ConceptAnchoredRetriever(flat, self.kb, config=cfg, event_sink=None)
        return self._retriever


# --------------------------------------------------------------------------- the HTTP app
def require_explore() -> None:
    """Check that the HTTP app's packages (starlette, uvicorn) are importable.

    Raises
    ------
    ConceptwalkError
        Either is missing, naming what to install.
    """
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ConceptwalkError(f"conceptwalk explore needs starlette and uvicorn: {EXPLORE_INSTALL_HINT}") from None


def static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files, served from the package: name -> (bytes, media type).

    Returns
    -------
    dict of str to (bytes, str)

    Examples
    --------
    >>> sorted(static_files())
    ['explore.css', 'explore.js', 'index.html']
    """
    kinds = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css"}
    base = resources.files(__package__).joinpath("explore_static")
    out = {}
    for name in ("index.html", "explore.js", "explore.css"):
        out[name] = (base.joinpath(name).read_bytes(), kinds[os.path.splitext(name)[1]])
    return out


def build_app(explorer: Explorer, *, host: str = "127.0.0.1", port: int = 8765) -> Any:
    """The Starlette app of the page and its JSON endpoints.

    ``GET /`` the page, ``GET /static/<file>`` its script and style sheet, ``GET /api/<endpoint>``
    an :meth:`Explorer.answer` as JSON. Bad input is a 400 (404 for an unknown or hidden id,
    with the same text for both) with ``{"error": message}``; any other method is a 405 (the
    explorer writes nothing). The ``Host`` header must name the address served (so a page from
    another site cannot read the explorer through DNS rebinding).

    Parameters
    ----------
    explorer : Explorer
    host, port : str, int
        What the server listens on (for the ``Host`` check).

    Returns
    -------
    starlette.applications.Starlette
    """
    require_explore()
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    files = static_files()
    headers = {
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    }

    def page(request: Request) -> Response:
        body, kind = files["index.html"]
        return Response(body, media_type=kind, headers=headers)

    def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in files or name == "index.html":
            return JSONResponse({"error": f"not found: {shown(name)}"}, status_code=404, headers=headers)
        body, kind = files[name]
        return Response(body, media_type=kind, headers=headers)

    def api(request: Request) -> Response:
        endpoint = request.path_params["endpoint"]
        params: dict[str, list[str]] = {}
        for key, value in request.query_params.multi_items():
            params.setdefault(key, []).append(value)
        try:
            if endpoint not in ENDPOINTS:
                return JSONResponse(
                    {"error": f"unknown endpoint {shown(endpoint)} (one of: {', '.join(ENDPOINTS)})"},
                    status_code=404,
                    headers=headers,
                )
            out = explorer.answer(endpoint, params)
        except NotFoundError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404, headers=headers)
        except (InputError, ValueError, IndexError) as exc:  # the documented errors (docs/errors.md)
            return JSONResponse({"error": " ".join(str(exc).split())}, status_code=400, headers=headers)
        except ConceptwalkError as exc:
            return JSONResponse({"error": " ".join(str(exc).split())}, status_code=400, headers=headers)
        return JSONResponse(out, headers=headers)

    allowed = ["127.0.0.1", "localhost", "[::1]", "::1"] if loopback(host) else [host, host.strip("[]")]
    allowed = sorted({*allowed, *(f"{h}:{port}" for h in allowed)})
    return Starlette(
        routes=[
            Route("/", page, methods=["GET", "HEAD"]),
            Route("/static/{name}", static, methods=["GET", "HEAD"]),
            Route("/api/{endpoint}", api, methods=["GET", "HEAD"]),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=allowed)],
    )


def serve_explorer(explorer: Explorer, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the explorer with uvicorn until interrupted.

    Parameters
    ----------
    explorer : Explorer
    host : str
        The address (loopback by default; another address serves the page to the network).
    port : int
    """
    import uvicorn

    app = build_app(explorer, host=host, port=port)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
