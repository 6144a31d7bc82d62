"""The MCP tool server: ``conceptwalk serve KB`` exposes the graph tools to agents over stdio.

Four tools, whose names and argument names are a public contract (pinned by
``tests/fixtures/mcp_tools.json``):

- ``graph_context`` ``{question?, concepts?, k?, nodeTypes?, nHits?}``: the nodes around a
  question, ranked by personalized PageRank (``nHits`` was ``hits``: a call that still sends
  ``hits`` is a tool error naming ``nHits``);
- ``link_suggest`` ``{concept, k?, method?, minShared?}``: missing links for a concept;
- ``graph_path`` ``{source, target}``: the shortest chain between two nodes (advanced);
- ``query`` ``{text, k?, conceptWalk?}``: the knowledge base's search, optionally wrapped by the
  concept walk (only when :mod:`conceptwalk.wrap` exists).

Each successful call returns ``structuredContent`` with the same JSON shape as the Python
result's ``to_dict()`` (``query``: ``{"text", "k", "conceptWalk", "results"}``, where ``results``
is the Python list) and one text block with the result's ``str()``. A failed call (bad arguments,
an unknown tool, a node that is missing *or hidden*) returns a tool result with ``isError: true``
and a one-line message; the server keeps serving.

Visibility: every call runs for a :class:`~conceptwalk.Caller`. Without options the server
answers for **public nodes only**; ``--scopes a,b`` adds scopes, ``--scopes '*'`` is all access.
With ``--token-file FILE`` (JSON ``{"<token>": ["scope", ...] | "*"}``) a client presents a token
per call in ``params._meta["conceptwalk/token"]`` or once for the session through the
``CONCEPTWALK_TOKEN`` environment variable of the server process; an unknown token is an error,
never more visibility.

The dispatch (:class:`ToolServer`) needs no MCP SDK; only :func:`build_server` and
:func:`serve_stdio` import ``mcp`` (the ``conceptwalk[mcp]`` extra), lazily, so this module and the
``conceptwalk serve`` command always import.

Examples
--------
>>> from conceptwalk import LinkGraph
>>> g = LinkGraph.from_edges([("auth", "tokens", "RELATED_TO"), ("tokens", "jwt", "USES"),
...                           ("auth", "login", "RELATED_TO"), ("login", "jwt", "USES")])
>>> ts = ToolServer(g, caller=Caller.all_access())
>>> [t["name"] for t in ts.list_tools()]
['graph_context', 'link_suggest', 'graph_path', 'read_node']
>>> out = ts.call("graph_path", {"source": "auth", "target": "jwt"})
>>> out.is_error, out.structured["nodes"][1]["id"], out.text
(False, 'login', 'path of length 2: auth -[RELATED_TO>]- login -[USES>]- jwt')
>>> bad = ts.call("graph_path", {"source": "auth", "target": "nowhere"})
>>> bad.is_error, bad.text
(True, "graph_path: target not found: 'nowhere'")
>>> ts.call("link_suggest", {"concept": "auth", "k": 0}).text
'link_suggest: invalid arguments: k: 0 is less than the minimum of 1'
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConceptwalkError, InputError, bounded, shown
from ..graph import Caller
from ..tools.common import source_kind, source_search

__all__ = [
    "TOKEN_ENV",
    "TOKEN_META_KEY",
    "TOOL_SPECS",
    "TokenFile",
    "ToolOutcome",
    "ToolServer",
    "build_server",
    "require_mcp",
    "serve_stdio",
    "tool_specs",
]

logger = logging.getLogger("conceptwalk.mcp")

#: Environment variable a stdio client sets on the server process to present a session token.
TOKEN_ENV = "CONCEPTWALK_TOKEN"
#: The ``_meta`` key of a ``tools/call`` request that carries a per-call token.
TOKEN_META_KEY = "conceptwalk/token"
#: What to install when the SDK is missing.
INSTALL_HINT = 'pip install "conceptwalk[mcp]"'

_MAX_K = 100
_MAX_CONTEXT_K = 200

_SERVER_INSTRUCTIONS = (
    "conceptwalk answers structural questions over a knowledge base's link graph, only over the "
    "nodes this connection may see. Start with graph_context (what is around a question or a "
    "set of concept ids); use link_suggest to find concepts that should probably be linked to a "
    "given one; graph_path (advanced) explains how two known ids are connected; query (when "
    "listed) is the knowledge base's own search, optionally extended by a concept walk. Ids in "
    "the outputs can be passed back as concepts/concept/source/target. A node that does not "
    "exist and a node this connection may not see give the same 'not found' error."
)

# --------------------------------------------------------------------------- tool specs
_GRAPH_CONTEXT = {
    "name": "graph_context",
    "title": "Graph context around a question",
    "description": (
        "Use first when you need the structural neighbourhood of a question or of known concept "
        "ids: which documents, concepts and code sit around it in the knowledge base's link graph. "
        "Seeds are the question's top full-text hits (weighted 1/rank) plus the given concept "
        "ids and the nodes the question names by id or alias (weight 1 each); the result ranks "
        "the other nodes by personalized PageRank from those seeds. Give a question, concepts, or "
        "both. Output: 'seeds' (what the walk started from, with source 'search', 'concept' or "
        "'name'), 'results' (ranked nodes, each with id, type, title, "
        "score - the node's personalized PageRank mass from the seeds, in [0, 1], higher is "
        "closer; comparable within one call only, and not the 'score' of the query tool's "
        "search results -, hops from the nearest seed and 'via', the seed it is reached "
        "through), 'params', and 'reason' when the result is empty. Only nodes visible to this "
        "connection are ever used or returned."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "maxLength": 4000,
                "description": "Natural-language question or keywords; its full-text hits seed the walk.",
            },
            "concepts": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "maxItems": 64,
                "description": "Node ids to seed the walk with (e.g. ids from earlier results). "
                "An unknown id is an error.",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": _MAX_CONTEXT_K,
                "default": 20,
                "description": "How many ranked nodes to return (seeds are listed separately).",
            },
            "nodeTypes": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "maxItems": 64,
                "description": 'Keep only results of these node types (e.g. ["CONCEPT", "DOC"]).',
            },
            "nHits": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 10,
                "description": "How many full-text hits of the question seed the walk.",
            },
            "rank": {
                "type": "string",
                "enum": ["ppr", "coverage"],
                "default": "ppr",
                "description": "'ppr' (default): by personalized PageRank. 'coverage': when several "
                "seeds describe one target - by how many seeds reach a node within "
                "maxHops, then PageRank; each result lists the seeds that reach it.",
            },
            "maxHops": {
                "type": "integer",
                "minimum": 1,
                "maximum": 3,
                "default": 2,
                "description": "Hops for rank 'coverage'.",
            },
        },
        "additionalProperties": False,
    },
    "annotations": {
        "title": "Graph context around a question",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}

_LINK_SUGGEST = {
    "name": "link_suggest",
    "title": "Suggest missing links for a concept",
    "description": (
        "Use when curating or exploring a concept: it proposes nodes that are not linked to the "
        "concept yet but share several neighbours with it (resource allocation: each shared "
        "neighbour z adds 1/degree(z), so rare shared neighbours count more). Output: "
        "'suggestions' (id, type, title, score, and the 'shared' neighbours that support each, "
        "ids ascending), 'candidates' (how many nodes met 'minShared'), 'minShared'. With method "
        "'ppr' it ranks by rooted PageRank from the concept instead, which also finds nodes two or "
        "more hops away on sparse, tree-like graphs where few nodes share two neighbours; each "
        "suggestion then has 'hops' and 'path' (the chain from the concept). Computed only over "
        "nodes visible to this connection."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "concept": {
                "type": "string",
                "minLength": 1,
                "description": "The node id to suggest links for. An unknown id is an error.",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": _MAX_K,
                "default": 10,
                "description": "How many suggestions to return.",
            },
            "method": {
                "type": "string",
                "enum": ["ra", "ppr"],
                "default": "ra",
                "description": "'ra' (default): resource allocation over shared neighbours. 'ppr': "
                "rooted PageRank from the concept (no minShared).",
            },
            "minShared": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "description": "Method 'ra' only (an error with 'ppr'): least number of shared "
                "neighbours a suggestion needs (default 2).",
            },
        },
        "required": ["concept"],
        "additionalProperties": False,
    },
    "annotations": {
        "title": "Suggest missing links for a concept",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}

_GRAPH_PATH = {
    "name": "graph_path",
    "title": "Shortest chain between two nodes (advanced)",
    "description": (
        "Advanced: use only when you already hold two node ids (from graph_context, link_suggest "
        "or query) and need to explain how they are connected. Returns the shortest chain of "
        "links between them, ignoring edge direction; among equally short chains the "
        "alphabetically smallest sequence of ids. Output: 'found', 'length' (number of hops), "
        "'nodes' (id, type, title, from source to target) and 'steps' (per hop the edge types "
        "and their direction: 'forward' = source->target). found=false means no chain exists "
        "through nodes visible to this connection."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "source": {"type": "string", "minLength": 1, "description": "Node id the chain starts at."},
            "target": {"type": "string", "minLength": 1, "description": "Node id the chain ends at."},
        },
        "required": ["source", "target"],
        "additionalProperties": False,
    },
    "annotations": {
        "title": "Shortest chain between two nodes (advanced)",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}

_QUERY = {
    "name": "query",
    "title": "Search the knowledge base",
    "description": (
        "Use to retrieve documents or nodes for a question: the knowledge base's own search "
        "(full-text top-k over nodes visible to this connection). With conceptWalk=false "
        "(the default) the 'results' list is exactly the plain search's output. With "
        "conceptWalk=true the question is resolved to concepts and a short typed walk from them "
        "appends extra candidates after the unchanged search results; each appended item "
        "carries via='concept-walk', the path it was reached by and per hop its provenance "
        "(authority, fidelity, extraction provenance, lifecycle). Output: 'text', 'k', "
        "'conceptWalk' and 'results' (list of result objects, best first). Two scores on two "
        "scales, never compared with each other: a search result's 'score' is the search's own "
        "relevance (BM25 for this server's full-text search: unbounded, higher is better); an "
        "appended item has no 'score' but 'walkScore', its best path's score in [0, 1] (the "
        "concept's resolution confidence x 0.5 per hop after the first x the extraction "
        "confidences of the path's edges). The list's order is the answer's order."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4000,
                "description": "The question or keywords to search for.",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": _MAX_K,
                "default": 10,
                "description": "How many search results (the walk may append more).",
            },
            "conceptWalk": {
                "type": "boolean",
                "default": False,
                "description": "Append concept-walk candidates after the search results.",
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    "annotations": {
        "title": "Search the knowledge base",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}

#: Default and hard cap of the neighbours ``read_node`` lists.
READ_NODE_NEIGHBOURS = 50
READ_NODE_NEIGHBOURS_CAP = 500
#: Characters of a node's body ``read_node`` returns (default and cap); a longer body is cut and
#: ``bodyTruncated`` says so.
READ_NODE_BODY_CHARS = 4000
READ_NODE_BODY_CAP = 100_000
#: Characters of the ``snippet`` that ``snippets=true`` adds to each result of graph_context and query.
SNIPPET_CHARS = 200

_SNIPPETS = {
    "type": "boolean",
    "default": False,
    "description": f"Add to each result a 'snippet': the start of the node's body, at most "
    f"{SNIPPET_CHARS} characters (null when the node has no body).",
}
_GRAPH_CONTEXT["inputSchema"]["properties"]["snippets"] = _SNIPPETS  # type: ignore[index]
_QUERY["inputSchema"]["properties"]["snippets"] = _SNIPPETS  # type: ignore[index]
_TYPE_LIST = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 64}
_QUERY["inputSchema"]["properties"].update(  # type: ignore[index]
    {
        "conceptTypes": dict(_TYPE_LIST, description="Node types the walk starts from (default: the server's)."),
        "expandEdgeTypes": dict(_TYPE_LIST, description="Edge types the walk goes through (default: the server's)."),
        "admitEdgeTypes": dict(
            _TYPE_LIST, description="Edge types whose far end may be appended (default: the server's)."
        ),
        "maxAdded": {
            "type": "integer",
            "minimum": 0,
            "maximum": 1000,
            "description": "At most this many items appended by the walk (never more than the server's cap).",
        },
    }
)

_READ_NODE = {
    "name": "read_node",
    "title": "Read a node's content",
    "description": (
        "Use to read the knowledge itself: a node's id, type, title and body (cut to maxBodyChars, "
        f"default {READ_NODE_BODY_CHARS}; 'bodyTruncated' says when), and its neighbours in the "
        f"link graph (at most maxNeighbours, default {READ_NODE_NEIGHBOURS}, in id order; each with id, "
        "type, title and the edges joining them, with type and direction), 'neighbourCount' (all of "
        "them) and 'neighboursTruncated'. Ids come from the other tools' results. Only nodes visible "
        "to this connection are returned or listed; a node that does not exist and a node this "
        "connection may not see give the same 'not found' error."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The node's id."},
            "maxNeighbours": {
                "type": "integer",
                "minimum": 0,
                "maximum": READ_NODE_NEIGHBOURS_CAP,
                "default": READ_NODE_NEIGHBOURS,
                "description": "Neighbours listed at most.",
            },
            "maxBodyChars": {
                "type": "integer",
                "minimum": 0,
                "maximum": READ_NODE_BODY_CAP,
                "default": READ_NODE_BODY_CHARS,
                "description": "Characters of the body returned at most.",
            },
        },
        "required": ["id"],
        "additionalProperties": False,
    },
    "annotations": {
        "title": "Read a node's content",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}

#: Every tool this module can serve, in listing order (``query`` only when the wrap is installed).
TOOL_SPECS: tuple[dict[str, Any], ...] = (_GRAPH_CONTEXT, _LINK_SUGGEST, _GRAPH_PATH, _QUERY, _READ_NODE)


def tool_specs(*, with_query: bool = True) -> list[dict[str, Any]]:
    """Deep copies of the tool definitions (``name``, ``title``, ``description``,
    ``inputSchema``, ``annotations``) as ``tools/list`` serves them.

    Parameters
    ----------
    with_query : bool
        Include the ``query`` tool.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> [t["name"] for t in tool_specs()]
    ['graph_context', 'link_suggest', 'graph_path', 'query', 'read_node']
    >>> tool_specs()[2]["inputSchema"]["required"]
    ['source', 'target']
    """
    return [copy.deepcopy(t) for t in TOOL_SPECS if with_query or t["name"] != "query"]


# --------------------------------------------------------------------------- tokens
_IDENTITY_KEY = os.urandom(32)
#: A token file whose modification time is this recent is re-read even when its stamp is the same
#: (the coarsest file system timestamp tick, FAT's, is 2 s).
_RACY_NS = 3_000_000_000


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object read as its (key, value) pairs in file order (duplicates kept)."""


class TokenFile:
    """Tokens and the scopes they grant, read from a JSON file ``{"<token>": [scopes] | "*"}``.

    ``[]`` grants public nodes only, ``"*"`` all access. The file fails closed: a token that
    appears twice (JSON would let the last one silently win) makes the whole file refused, the
    error naming the two entries by their place in the file (1-based), never the token; entries
    are numbered by that place everywhere (the unknown-scope warning too). The file is re-read
    when its modification time, size, inode or mode changes (and on every lookup while its
    modification time is under 3 s old, as a rewrite within one coarse timestamp tick keeps
    them all), so a token can be revoked without a restart; a file that becomes unreadable, malformed (or, with ``private``, readable by other
    users) makes every token lookup fail until it is fixed. Tokens are kept only as SHA-256
    digests in memory and compared in constant time.

    Parameters
    ----------
    path : str
        The JSON file.
    private : bool
        Refuse the file when users other than its owner may read or write it (the HTTP server
        sets this; ``chmod 600``), or when a user other than the server's (or root) owns it.
        Ignored where file modes do not exist (Windows).

    Raises
    ------
    ConceptwalkError
        The file is missing, malformed, holds a token twice or (``private``) is readable by
        other users (at construction).

    Examples
    --------
    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "tokens.json")
    >>> with open(p, "w") as f:
    ...     json.dump({"s3cret": ["tenant-a"], "root": "*"}, f)
    >>> tf = TokenFile(p)
    >>> tf.caller("s3cret") == Caller.with_scopes("tenant-a"), tf.caller("root").sees_everything
    (True, True)
    >>> tf.caller("guess")
    Traceback (most recent call last):
    ...
    conceptwalk.errors.ConceptwalkError: unknown token
    """

    def __init__(self, path: str, *, private: bool = False) -> None:
        self.path = os.fspath(path)
        self.private = bool(private)
        self._lock = threading.Lock()
        self._stamp: tuple[int, ...] | None = None
        self._racy = False
        self._table: list[tuple[bytes, Caller]] | None = None
        self._entries: list[Caller] = []
        self._error: str | None = None
        self._refresh(log=False)  # a start-up error is raised (and printed once by the caller)
        if self._error is not None:
            raise ConceptwalkError(self._error)

    @staticmethod
    def _digest(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    def _match(self, token: str) -> Caller | None:
        """The entry whose token is ``token``: every entry's digest is compared in constant time
        (no early exit, no hash-table probe whose timing depends on the token)."""
        digest = self._digest(token)
        found = None
        for known, caller in self._table or ():
            if hmac.compare_digest(known, digest):
                found = caller
        return found

    def _load(self) -> tuple[list[tuple[bytes, Caller]], list[Caller]]:
        if self.private and os.name == "posix":
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                raise ConceptwalkError(f"token file not found: {self.path}") from None
            except OSError as exc:
                raise ConceptwalkError(f"token file {self.path} cannot be read: {exc}") from None
            mode = st.st_mode
            if st.st_uid not in (os.geteuid(), 0):  # its owner may rewrite it: grant itself "*"
                raise ConceptwalkError(
                    f"token file {self.path} is owned by another user (uid {st.st_uid}); "
                    f"make it the server's user's: chown {os.geteuid()} {self.path}"
                )
            if mode & 0o066:
                raise ConceptwalkError(
                    f"token file {self.path} is readable or writable by other users (mode {mode & 0o777:o}); "
                    f"make it private to the server's user: chmod 600 {self.path}"
                )
        try:
            with open(self.path, encoding="utf-8") as f:
                # every object as its list of pairs: a repeated key must not silently win
                data = json.load(f, object_pairs_hook=_Pairs)
        except FileNotFoundError:
            raise ConceptwalkError(f"token file not found: {self.path}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConceptwalkError(f"token file {self.path} is not valid JSON: {exc}") from None
        if not isinstance(data, _Pairs):
            raise ConceptwalkError(f'token file {self.path} must hold a JSON object {{token: [scopes] or "*"}}')
        table: list[tuple[bytes, Caller]] = []
        entries: list[Caller] = []
        first: dict[str, int] = {}
        for i, (token, scopes) in enumerate(data, 1):  # entries numbered by their place in the file
            if not token:
                raise ConceptwalkError(f"token file {self.path}: entry {i} has an empty token")
            if token in first:  # named by position, never by the token
                raise ConceptwalkError(
                    f"token file {self.path}: entry {i} repeats the token of entry {first[token]}; "
                    "each token may appear once"
                )
            first[token] = i
            if scopes == "*":
                entries.append(Caller.all_access())
            elif (
                isinstance(scopes, list)
                and not isinstance(scopes, _Pairs)
                and all(isinstance(s, str) and s for s in scopes)
            ):
                entries.append(Caller.with_scopes(*scopes))
            else:
                shown_value = "an object" if isinstance(scopes, _Pairs) else shown(scopes)
                raise ConceptwalkError(
                    f'token file {self.path}: entry {i} must map to a list of scope names or "*", got {shown_value}'
                )
            table.append((self._digest(token), entries[-1]))
        return table, entries

    def _refresh(self, *, log: bool = True) -> None:
        try:
            st = os.stat(self.path)
            stamp: tuple[int, ...] | None = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode)
        except OSError:
            stamp = None
        now = time.time_ns()
        if stamp is not None and stamp == self._stamp and not self._racy:
            return
        # A rewrite within the timestamp tick of the last read keeps the stamp (coarse file system
        # clocks): while the file's time is that recent, it is read again (git's "racy" rule).
        self._racy = stamp is not None and now - stamp[0] < _RACY_NS
        changed = stamp != self._stamp
        self._stamp = stamp
        try:
            self._table, self._entries = self._load()
            self._error = None
        except ConceptwalkError as exc:
            self._table, self._entries = None, []
            again = not changed and self._error == str(exc)  # a racy re-read: logged once
            self._error = str(exc)
            if log and not again:  # a reload that failed while serving: the operator sees it in the log
                logger.error("%s", exc)

    def unknown_scopes(self, graph: Any) -> list[tuple[int, list[str]]]:
        """The scopes each entry of the file grants that no node of ``graph`` carries (probably a
        typo: such a scope grants nothing), as of the file's last successful read.

        Entries are named by their position in the file (1-based), never by their token.

        Parameters
        ----------
        graph : LinkGraph
            The graph the server answers over.

        Returns
        -------
        list of (int, list of str)
            ``(entry number, its unknown scopes sorted)`` for each entry with any, in file order.

        Examples
        --------
        >>> import json, os, tempfile
        >>> from conceptwalk import LinkGraph
        >>> p = os.path.join(tempfile.mkdtemp(), "tokens.json")
        >>> with open(p, "w") as f:
        ...     json.dump({"t1": ["tenant-a"], "t2": ["tenant-a", "tenant-zz"], "root": "*"}, f)
        >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "scopes": ["tenant-a"]}])
        >>> TokenFile(p).unknown_scopes(g)
        [(2, ['tenant-zz'])]
        """
        with self._lock:
            entries = list(self._entries)
        found = []
        for i, caller in enumerate(entries, 1):
            unknown = caller.unknown_scopes(graph)
            if unknown:
                found.append((i, unknown))
        return found

    def entries(self) -> list[Caller]:
        """The caller of each entry, in file order, as of the file's last successful read (the
        explorer's caller switch lists them by position, never by token).

        Returns
        -------
        list of Caller
        """
        with self._lock:
            return list(self._entries)

    def lookup(self, token: str) -> tuple[str, Caller] | None:
        """The caller a token stands for, with an opaque identity of the token, or None.

        The identity (a keyed hash of the token, the key random per process) tells two
        tokens apart without revealing either: the HTTP server binds a session to it.

        Parameters
        ----------
        token : str

        Returns
        -------
        (str, Caller) or None
            None for a token not in the file, or while the file cannot be read (fail closed).
        """
        with self._lock:
            self._refresh()
            if self._table is None or not isinstance(token, str):
                return None
            found = self._match(token)
        if found is None:
            return None
        return hmac.new(_IDENTITY_KEY, self._digest(token), hashlib.sha256).hexdigest(), found

    def caller(self, token: str) -> Caller:
        """The caller a token stands for.

        Parameters
        ----------
        token : str

        Returns
        -------
        Caller

        Raises
        ------
        ConceptwalkError
            ``"unknown token"`` for a token not in the file (no hint about near matches), or
            the file can no longer be read.
        """
        with self._lock:
            self._refresh()
            if self._table is None:
                raise ConceptwalkError("the server's token file cannot be read; no token is accepted")
            found = self._match(token) if isinstance(token, str) else None
        if found is None:
            raise ConceptwalkError("unknown token")
        return found


# --------------------------------------------------------------------------- dispatch
@dataclass
class ToolOutcome:
    """The result of one tool call.

    Attributes
    ----------
    structured : dict or None
        The tool's JSON output (``structuredContent``); None on error.
    text : str
        The readable text (the error message on error).
    is_error : bool
        Whether the call failed (a tool error: the server keeps serving).
    """

    structured: dict[str, Any] | None
    text: str
    is_error: bool = False


class _ToolError(Exception):
    pass


def _schema_error(name: str, schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    try:
        import jsonschema
    except ImportError:  # comes with the MCP SDK
        raise ConceptwalkError(f"validating tool arguments needs jsonschema: {INSTALL_HINT}") from None

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: (list(e.absolute_path), e.message))
    if not errors:
        return None
    parts = []
    for err in errors[:3]:
        where = ".".join(str(p) for p in err.absolute_path)
        msg = f"{where[:80] + ': ' if where else ''}{_clip(err.message)}"
        if err.validator == "additionalProperties":
            msg += f" (allowed: {', '.join(schema.get('properties', {}))})"
        parts.append(msg)
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{name}: invalid arguments: " + "; ".join(parts) + more


def _clip(text: str, limit: int = 300) -> str:
    """A validator message (which may quote the whole bad value) cut to about ``limit``
    characters: its head and its tail, where the validator says what is wrong ("... is too
    long").

    >>> _clip("'" + "q" * 5000 + "' is too long", 40)
    "'qqqqqqqqqqqqqqqqqqq… (5014 chars) …q' is too long"
    """
    if len(text) <= limit:
        return text
    head, tail = limit // 2, limit // 2 - 6
    return f"{text[:head]}… ({len(text)} chars) …{text[-tail:]}"


#: Arguments renamed for one name per concept across the API, the CLI and the tools: a call that
#: sends the old name is a tool error naming the new one (never silently ignored or aliased).
RENAMED_ARGUMENTS: dict[str, dict[str, str]] = {"graph_context": {"hits": "nHits"}}


def _renamed_error(name: str, args: Mapping[str, Any]) -> str | None:
    renamed = RENAMED_ARGUMENTS.get(name, {})
    old = [key for key in args if key in renamed]
    if not old:
        return None
    said = "; ".join(f"'{key}' was renamed to '{renamed[key]}'" for key in old)
    return f"{name}: invalid arguments: {said} (send '{renamed[old[0]]}' instead)"


def _integral_floats_to_int(schema: Mapping[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema accepts ``5.0`` as an integer; hand the Python API an ``int``."""
    props = schema.get("properties", {})
    for key, val in args.items():
        if props.get(key, {}).get("type") == "integer" and isinstance(val, float):
            args[key] = int(val)
    return args


class ToolServer:
    """Transport-independent dispatch of the MCP tools over one knowledge base.

    Parameters
    ----------
    source : KnowledgeBase, LinkGraph or any :class:`conceptwalk.tools.GraphSource`
        What the tools read. A knowledge base is re-read through its cached ``graph()`` on
        each call, so committed updates show up without a restart.
    caller : Caller
        Who a call without a token is answered for. Default: public nodes only.
    tokens : TokenFile, optional
        When given, a call may present a token (see :meth:`call`); an unknown token is an error.
    session_token : str, optional
        A token presented once for every call (the ``CONCEPTWALK_TOKEN`` variable of the
        process); a per-call token overrides it. Needs ``tokens``.
    require_token : bool
        With ``tokens``: reject calls that present no token instead of answering for
        ``caller``.
    query_fn : callable, optional
        ``query_fn(text, k, concept_walk, caller) -> list[dict]``; enables the ``query`` tool.
        Default: built from :mod:`conceptwalk.wrap` when it is installed and ``source`` is a
        knowledge base.
    event_sink : optional
        Where the default ``query`` tool's concept walks send their retrieval events (a
        :func:`conceptwalk.wrap.make_sink` spec such as ``"jsonl:PATH"``); default none.
    walk_config : WalkConfig, optional
        The default ``query`` tool's walk settings (concept node types, expansion and admission
        edge types, ``max_candidates`` as the cap on additions); a call's ``conceptTypes``,
        ``expandEdgeTypes``, ``admitEdgeTypes`` and ``maxAdded`` override them for that call
        (``maxAdded`` never above this cap). Default: :class:`~conceptwalk.wrap.WalkConfig`'s.

    Raises
    ------
    ConceptwalkError
        ``session_token`` without ``tokens``, or a ``session_token`` the token file does not
        hold.
    """

    def __init__(
        self,
        source: Any,
        *,
        caller: Caller | None = None,
        tokens: TokenFile | None = None,
        session_token: str | None = None,
        require_token: bool = False,
        query_fn: Callable[[str, int, bool, Caller], list[dict[str, Any]]] | None = None,
        event_sink: Any = None,
        walk_config: Any = None,
    ) -> None:
        source_kind(source)  # the one graph-source protocol: a LinkGraph or a GraphSource
        self.source = source
        self.caller = Caller.public() if caller is None else caller
        if not isinstance(self.caller, Caller):
            raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        self.tokens = tokens
        self.require_token = bool(require_token)
        if require_token and tokens is None:
            raise ConceptwalkError("require_token needs a token file")
        if session_token is not None:
            if tokens is None:
                raise ConceptwalkError(f"{TOKEN_ENV} is set but the server has no --token-file")
            try:
                tokens.caller(session_token)  # fail at start on an unknown session token
            except ConceptwalkError as exc:
                raise ConceptwalkError(
                    f"{TOKEN_ENV}: {exc} (the session token this variable sets is not in the token file)"
                ) from None
        self.session_token = session_token
        self.walk_config = walk_config
        self._walk_for: Callable[..., list[dict[str, Any]]] | None = None
        if query_fn is None:
            self._walk_for = _default_query_fn(source, event_sink, walk_config)
            query_fn = self._walk_for
        self.query_fn = query_fn
        self._specs = tool_specs(with_query=self.query_fn is not None)
        self._by_name = {t["name"]: t for t in self._specs}
        self._handlers: dict[str, Callable[[dict[str, Any], Caller], tuple[dict[str, Any], str]]] = {
            "graph_context": self._graph_context,
            "link_suggest": self._link_suggest,
            "graph_path": self._graph_path,
            "query": self._query,
            "read_node": self._read_node,
        }

    # -- listing
    def list_tools(self) -> list[dict[str, Any]]:
        """The served tool definitions, in listing order.

        Returns
        -------
        list of dict
            Deep copies of the specs (``name``, ``title``, ``description``, ``inputSchema``,
            ``outputSchema``, ``annotations``).
        """
        return copy.deepcopy(self._specs)

    # -- callers
    def resolve_caller(self, token: str | None = None) -> Caller:
        """The caller a call is answered for, given the token it presents (if any).

        Parameters
        ----------
        token : str, optional
            The token the call presents; None = the session's token (``CONCEPTWALK_TOKEN``),
            or the server's fixed caller when there is none.

        Returns
        -------
        Caller
            Whose visibility the call is answered with.

        Raises
        ------
        ConceptwalkError
            A token is presented but the server has no token file, the token is unknown, or
            no token is presented while one is required.
        """
        from_env = token is None and self.session_token is not None
        if token is None:
            token = self.session_token
        if token is None:
            if self.require_token:
                raise ConceptwalkError(
                    f"this server requires a token (in _meta[{TOKEN_META_KEY!r}] "
                    f"or the {TOKEN_ENV} environment variable)"
                )
            return self.caller
        if self.tokens is None:
            raise ConceptwalkError("this server accepts no tokens (it was started without --token-file)")
        if not isinstance(token, str):
            raise ConceptwalkError("unknown token")
        if from_env:
            try:
                return self.tokens.caller(token)
            except ConceptwalkError as exc:
                raise ConceptwalkError(f"{TOKEN_ENV}: {exc}") from None
        return self.tokens.caller(token)

    # -- calls
    def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        token: str | None = None,
        caller: Caller | None = None,
    ) -> ToolOutcome:
        """Run one tool call; never raises for a bad call.

        Parameters
        ----------
        name : str
            Tool name.
        arguments : mapping or None
            The call's arguments, validated against the tool's input schema.
        token : str, optional
            The token the call presents (``_meta["conceptwalk/token"]``).
        caller : Caller, optional
            The caller a transport has already authenticated (the HTTP server's bearer token);
            when given, ``token`` and the session token are not consulted.

        Returns
        -------
        ToolOutcome
            ``is_error`` with a one-line message for an unknown tool, invalid arguments, an
            unknown token, a node that is missing or hidden (same text), or an internal error.
        """
        try:
            spec = self._by_name.get(name) if isinstance(name, str) else None
            if spec is None:
                known = ", ".join(self._by_name)
                raise _ToolError(f"unknown tool {shown(name)}; this server has: {known}")
            args = {} if arguments is None else arguments
            if not isinstance(args, Mapping):
                raise _ToolError(f"{name}: arguments must be an object")
            args = dict(args)
            problem = _renamed_error(name, args) or _schema_error(name, spec["inputSchema"], args)
            if problem is None:
                args = _integral_floats_to_int(spec["inputSchema"], args)
            if problem is not None:
                raise _ToolError(problem)
            if caller is None:
                caller = self.resolve_caller(token)
            elif not isinstance(caller, Caller):
                raise ConceptwalkError("internal error: the transport gave no caller")
            structured, text = self._handlers[name](args, caller)
            return ToolOutcome(structured, text, False)
        except _ToolError as exc:
            return ToolOutcome(None, bounded(str(exc)), True)
        except ConceptwalkError as exc:
            return ToolOutcome(None, bounded(f"{name}: {exc}"), True)
        except Exception:  # a bug: keep serving, log the details on the server side only
            logger.exception("internal error in tool %r", name)
            return ToolOutcome(None, f"{name}: internal error (details are in the server log)", True)

    def _graph_context(self, a: dict[str, Any], caller: Caller) -> tuple[dict[str, Any], str]:
        from ..tools import graph_context

        question = a.get("question")
        concepts = a.get("concepts") or []
        if (question is None or not question.strip()) and not concepts:
            raise _ToolError("graph_context: give a non-empty 'question', 'concepts', or both")
        res = graph_context(
            self.source,
            question,
            concepts=concepts,
            k=a.get("k", 20),
            caller=caller,
            node_types=a.get("nodeTypes"),
            n_hits=a.get("nHits", 10),
            rank=a.get("rank", "ppr"),
            max_hops=a.get("maxHops", 2),
        )
        out = res.to_dict()
        if a.get("snippets"):
            self._add_snippets(out["results"])
        return out, str(res)

    def _bodies(self, ids: list[str]) -> dict[str, str | None]:
        """id -> body for ids the caller was already shown (a bare graph has no bodies)."""
        nodes = getattr(self.source, "nodes", None)
        if source_kind(self.source) != "store" or not callable(nodes):
            return {}
        return {n["id"]: n.get("body") for n in nodes(ids)}

    def _add_snippets(self, results: list[dict[str, Any]]) -> None:
        bodies = self._bodies([r["id"] for r in results if isinstance(r.get("id"), str)])
        for r in results:
            body = bodies.get(r.get("id"))  # type: ignore[arg-type]
            r["snippet"] = None if body is None else body[:SNIPPET_CHARS]

    def _read_node(self, a: dict[str, Any], caller: Caller) -> tuple[dict[str, Any], str]:
        from ..tools.common import source_graph

        g, _ = source_graph(self.source)
        vm = caller.visibility(g)
        i = g.index(a["id"], visible=vm, argument="node")  # hidden and missing: the same error
        nid, ntype, title = g.node_at(i)
        seen = None if vm is None else vm.mask
        ip, ind = g.core.indptr, g.core.indices
        nbrs = [int(j) for j in ind[ip[i] : ip[i + 1]] if seen is None or seen[j]]
        cap = a.get("maxNeighbours", READ_NODE_NEIGHBOURS)
        listed: list[dict[str, Any]] = []
        for j in nbrs[:cap]:  # ascending index = ascending id
            jid, jtype, jtitle = g.node_at(j)
            edges = [
                {
                    "type": g.edge_type_names[int(g.edge_type_codes[e])],
                    "direction": "out" if int(g.edge_src[e]) == i else "in",
                }
                for e in g.edges_between(i, j)
            ]
            listed.append({"id": jid, "type": jtype, "title": jtitle, "edges": edges})
        body = self._bodies([nid]).get(nid)
        limit = a.get("maxBodyChars", READ_NODE_BODY_CHARS)
        out = {
            "id": nid,
            "type": ntype,
            "title": title,
            "body": None if body is None else body[:limit],
            "bodyTruncated": body is not None and len(body) > limit,
            "neighbours": listed,
            "neighbourCount": len(nbrs),
            "neighboursTruncated": len(nbrs) > cap,
        }
        lines = [
            f"{nid} [{ntype}]" + (f"  {title}" if title else ""),
            body[:limit] if body else "(no body)",
            f"neighbours ({len(nbrs)}" + (f", first {cap}" if len(nbrs) > cap else "") + "):",
        ]
        lines += [
            f"  {n['id']} [{n['type']}] " + ", ".join(f"{e['type']} {e['direction']}" for e in n["edges"])
            for n in listed
        ]
        return out, "\n".join(lines)

    def _link_suggest(self, a: dict[str, Any], caller: Caller) -> tuple[dict[str, Any], str]:
        from ..tools import link_suggest

        res = link_suggest(
            self.source,
            a["concept"],
            k=a.get("k", 10),
            caller=caller,
            min_shared=a.get("minShared"),
            method=a.get("method", "ra"),
        )
        return res.to_dict(), str(res)

    def _graph_path(self, a: dict[str, Any], caller: Caller) -> tuple[dict[str, Any], str]:
        from ..tools import graph_path

        res = graph_path(self.source, a["source"], a["target"], caller=caller)
        return res.to_dict(), str(res)

    def _query(self, a: dict[str, Any], caller: Caller) -> tuple[dict[str, Any], str]:
        assert self.query_fn is not None
        text, k, walk = a["text"], a.get("k", 10), bool(a.get("conceptWalk", False))
        settings = {
            key: a[key] for key in ("conceptTypes", "expandEdgeTypes", "admitEdgeTypes", "maxAdded") if key in a
        }
        if settings and self._walk_for is None:
            raise _ToolError(
                "query: this server's query tool takes no walk settings "
                "(conceptTypes, expandEdgeTypes, admitEdgeTypes, maxAdded)"
            )
        # visibility always comes from the token: the settings choose what is walked, never who sees it
        if settings:
            assert self._walk_for is not None
            results = self._walk_for(text, k, walk, caller, **settings)
        else:
            results = self.query_fn(text, k, walk, caller)
        if a.get("snippets"):
            results = [dict(r) for r in results]
            self._add_snippets(results)
        structured = {"text": text, "k": k, "conceptWalk": walk, "results": results}
        return structured, _query_text(text, results)


def _query_text(text: str, results: list[dict[str, Any]]) -> str:
    lines = [f"results for {text!r}" + ("" if results else " (none)")]
    for i, r in enumerate(results, 1):
        rid = r.get("id", "?")
        title = r.get("title")
        via = r.get("via")
        score = r.get("score")
        s = f"{score:.4g}  " if isinstance(score, (int, float)) and not isinstance(score, bool) else ""
        lines.append(f"  {i:>3}. {s}{rid}" + (f"  {title}" if title else "") + (f"  (via {via})" if via else ""))
    return "\n".join(lines)


def _default_query_fn(
    source: Any, event_sink: Any = None, walk_config: Any = None
) -> Callable[..., list[dict[str, Any]]] | None:
    """The ``query`` tool over :mod:`conceptwalk.wrap` (built-in FTS flat search wrapped by the
    concept walk, with the server's ``walk_config``), or None when the wrap is not installed or
    ``source`` is not a knowledge base. The function takes the per-call walk settings as keyword
    arguments (``conceptTypes``, ``expandEdgeTypes``, ``admitEdgeTypes``, ``maxAdded``; the cap
    never above the server's)."""
    if source_kind(source) != "store" or source_search(source) is None:
        return None
    try:
        from dataclasses import replace

        from ..wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search
    except ImportError:
        return None
    base = walk_config if walk_config is not None else WalkConfig()
    # The flat search's own default caller is public-only; every call passes its caller anyway.
    flat = builtin_flat_search(source, caller=Caller.public())
    retrievers = {base: ConceptAnchoredRetriever(flat, source, config=base, event_sink=event_sink)}
    lock = threading.Lock()  # the retriever's caches are not promised to be thread-safe

    def run(text: str, k: int, concept_walk: bool, caller: Caller, **settings: Any) -> list[dict[str, Any]]:
        cfg = base
        if settings:
            changes: dict[str, Any] = {}
            for key, field in (
                ("conceptTypes", "concept_node_types"),
                ("expandEdgeTypes", "expand_edge_types"),
                ("admitEdgeTypes", "admit_edge_types"),
            ):
                if key in settings:
                    changes[field] = tuple(settings[key])
            if "maxAdded" in settings:
                changes["max_candidates"] = min(int(settings["maxAdded"]), base.max_candidates)
            cfg = replace(base, **changes)
        with lock:
            r = retrievers.get(cfg)
            if r is None:
                if len(retrievers) > 32:  # a bounded cache of per-setting retrievers
                    retrievers.pop(next(k_ for k_ in retrievers if k_ is not base))
                r = retrievers[cfg] = ConceptAnchoredRetriever(flat, source, config=cfg, event_sink=event_sink)
            return list(r.query(text, k, concept_walk=concept_walk, caller=caller))

    return run


# --------------------------------------------------------------------------- MCP glue
def require_mcp() -> Any:
    """Import the MCP Python SDK, or say how to install it.

    Returns
    -------
    module
        The SDK's ``mcp_types`` module.

    Raises
    ------
    ConceptwalkError
        The ``mcp`` extra is not installed (``pip install "conceptwalk[mcp]"``).
    """
    try:
        import mcp.server.lowlevel  # noqa: F401
        import mcp_types
    except ImportError as exc:
        raise ConceptwalkError(f"the MCP server needs the MCP Python SDK: {INSTALL_HINT} ({exc})") from None
    return mcp_types


def _meta_token(ctx: Any, params: Any) -> str | None:
    raw = getattr(ctx, "params", None)
    meta = raw.get("_meta") if isinstance(raw, Mapping) else None
    if not isinstance(meta, Mapping):
        meta = getattr(params, "meta", None)
    if isinstance(meta, Mapping) and TOKEN_META_KEY in meta:
        tok = meta[TOKEN_META_KEY]
        return tok if isinstance(tok, str) else repr(tok)
    return None


def build_server(tools: ToolServer, *, caller_of: Callable[[Any], Caller] | None = None) -> Any:
    """An ``mcp.server.lowlevel.Server`` serving ``tools`` (needs the ``mcp`` extra).

    Parameters
    ----------
    tools : ToolServer
    caller_of : callable, optional
        ``caller_of(ctx) -> Caller``: who a call is answered for, from the SDK's request
        context (the HTTP server reads the caller its authentication put on the HTTP request);
        a ``_meta`` token is then ignored. Default: the ``_meta`` token or the session token
        (stdio).

    Returns
    -------
    mcp.server.lowlevel.Server

    Raises
    ------
    ConceptwalkError
        The MCP SDK is not installed (the message names ``pip install "conceptwalk[mcp]"``).
    """
    types = require_mcp()
    import anyio
    from mcp.server.lowlevel import Server

    from .. import __version__

    tool_models = [types.Tool.model_validate(t) for t in tools.list_tools()]

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tool_models)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        if caller_of is not None:
            caller = caller_of(ctx)
            out = await anyio.to_thread.run_sync(lambda: tools.call(params.name, params.arguments, caller=caller))
        else:
            token = _meta_token(ctx, params)
            out = await anyio.to_thread.run_sync(lambda: tools.call(params.name, params.arguments, token=token))
        content = [types.TextContent(type="text", text=out.text)]
        if out.is_error:
            return types.CallToolResult(content=content, isError=True)
        return types.CallToolResult(content=content, structuredContent=out.structured)

    return Server(
        "conceptwalk",
        version=__version__,
        instructions=_SERVER_INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def serve_stdio(tools: ToolServer) -> None:
    """Serve ``tools`` over stdin/stdout until the client closes the connection.

    Parameters
    ----------
    tools : ToolServer
    """
    require_mcp()
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(tools)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
