"""The MCP tool server over Streamable HTTP: ``conceptwalk serve KB --http HOST:PORT``.

The same tools as the stdio server (:class:`~conceptwalk.serve.mcp.ToolServer`), served by the
MCP SDK's own Streamable HTTP transport (its session manager and Starlette app, run by uvicorn)
at one endpoint (``/mcp``). This module adds only the policy around it, as one ASGI layer in
front of the SDK's app (:class:`HttpGate`):

- **Who is asking** comes from ``Authorization: Bearer <token>`` alone, looked up in the token
  file (:class:`~conceptwalk.serve.mcp.TokenFile`, compared in constant time, re-read when it
  changes). An unknown token is ``401`` with ``WWW-Authenticate: Bearer``, never a public
  answer; no token is ``401`` under ``require_token``, else the call is answered for public
  nodes only. A token anywhere else (a query string, ``_meta``, a tool argument) is ignored.
  Tokens are never logged or echoed; the access log is off (a query string could hold one).
  The caller is resolved on every HTTP request, so a revoked token stops working at once,
  inside an open session too; a session belongs to the credential that opened it (the SDK
  answers ``404`` to any other).
- **Origin**: a request whose ``Origin`` header is not the server's own nor in
  ``allow_origins`` is ``403`` (a browser page cannot reach the server through DNS rebinding);
  on a loopback bind the SDK also checks ``Host``.
- **Limits**: the body size (``413``), open sessions (``503``; an idle session is closed after
  ``session_idle_seconds``), concurrent connections (``503``), and the tools' own argument
  bounds (``k``, hops, text length: a tool error). The server sends no server-initiated
  messages, so ``GET`` (the optional SSE stream) is ``405`` as the specification allows, and
  every POST is answered with one JSON response: no long-lived stream holds a session or a
  shutdown.

Examples
--------
>>> parse_bind("127.0.0.1:8765"), parse_bind(":8765"), parse_bind("[::1]:0")
(('127.0.0.1', 8765), ('127.0.0.1', 8765), ('::1', 0))
>>> is_loopback("localhost"), is_loopback("0.0.0.0")
(True, False)
>>> own_origins("127.0.0.1", 8765)[:2]
['http://127.0.0.1:8765', 'http://localhost:8765']
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConceptwalkError
from ..graph import Caller
from ._net import is_loopback
from .mcp import TokenFile, ToolServer, build_server, require_mcp

__all__ = [
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "HttpGate",
    "HttpSettings",
    "build_http_app",
    "is_loopback",
    "own_origins",
    "parse_bind",
    "serve_http",
]

logger = logging.getLogger("conceptwalk.mcp.http")

#: The endpoint path.
DEFAULT_PATH = "/mcp"
#: The port ``--http`` uses when none is given (``--http 127.0.0.1``).
DEFAULT_PORT = 8765
#: The ASGI scope key under which the gate puts the request's caller.
CALLER_KEY = "conceptwalk.caller"


def parse_bind(spec: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT``, ``:PORT``, ``PORT`` or ``HOST``) as ``(host, port)``;
    the host defaults to ``127.0.0.1`` and the port to :data:`DEFAULT_PORT`; port 0 picks a
    free port.

    Parameters
    ----------
    spec : str

    Returns
    -------
    (str, int)

    Raises
    ------
    ConceptwalkError
        Not a host and a port in 0..65535.

    Examples
    --------
    >>> parse_bind("0.0.0.0:80")
    ('0.0.0.0', 80)
    >>> parse_bind("host:x")
    Traceback (most recent call last):
    ...
    conceptwalk.errors.ConceptwalkError: --http: expected HOST:PORT with a port in 0..65535, got 'host:x'
    """
    s = spec.strip() if isinstance(spec, str) else ""
    host, port_s = "127.0.0.1", str(DEFAULT_PORT)
    if s.startswith("["):
        close = s.find("]")
        rest = s[close + 1 :] if close > 0 else "?"
        if close < 0 or (rest and not rest.startswith(":")):
            raise ConceptwalkError(f"--http: expected HOST:PORT with a port in 0..65535, got {spec!r}")
        host, port_s = s[1:close], (rest[1:] if rest else port_s)
    elif s.count(":") == 1:
        h, port_s = s.split(":")
        host = h or host
    elif s.isdigit():
        port_s = s
    elif s and ":" not in s:
        host = s
    else:
        raise ConceptwalkError(f"--http: expected HOST:PORT with a port in 0..65535, got {spec!r}")
    if not (port_s.isascii() and port_s.isdigit()) or int(port_s) > 65535 or not host:
        raise ConceptwalkError(f"--http: expected HOST:PORT with a port in 0..65535, got {spec!r}")
    return host, int(port_s)


def own_origins(host: str, port: int) -> list[str]:
    """The ``Origin`` values of pages served by this server itself (always allowed).

    Parameters
    ----------
    host : str
    port : int

    Returns
    -------
    list of str
    """
    names = ["127.0.0.1", "localhost", "[::1]"] if is_loopback(host) else [f"[{host}]" if ":" in host else host]
    return [f"http://{n}:{port}" for n in names]


@dataclass(frozen=True)
class HttpSettings:
    """The HTTP server's exposure and limits.

    Attributes
    ----------
    host, port : str, int
        Where to listen (port 0: a free port).
    path : str
        The endpoint.
    allow_origins : tuple of str
        ``Origin`` values allowed besides the server's own (exact, e.g. ``https://app.example``).
    max_body_bytes : int
        Largest request body (``413`` above).
    max_sessions : int
        Open sessions at most (``503`` for one more).
    session_idle_seconds : float
        A session with no request for this long is closed.
    max_connections : int
        Concurrent HTTP connections at most (``503`` above).
    drain_seconds : float
        On SIGTERM/SIGINT, how long in-flight calls may take to finish.
    request_seconds : float
        How long one request may take (``504`` after).
    idle_connection_seconds : float
        A connection with no request in flight -- idle between requests, or still sending a
        request's head -- is closed after this long (a client that sends its headers a byte at a
        time cannot hold a connection, and so ``max_connections``, forever).
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    allow_origins: tuple[str, ...] = field(default_factory=tuple)
    max_body_bytes: int = 256 * 1024
    max_sessions: int = 1000
    session_idle_seconds: float = 300.0
    max_connections: int = 1000
    drain_seconds: float = 10.0
    request_seconds: float = 60.0
    idle_connection_seconds: float = 15.0


class HttpGate:
    """The ASGI layer in front of the SDK's Streamable HTTP app: Origin, bearer token, GET.

    Parameters
    ----------
    app : ASGI app
        The SDK's app (``Server.streamable_http_app``).
    tokens : TokenFile or None
        The token file; None: no token is accepted (every presented token is ``401``).
    require_token : bool
        Refuse requests without a token (``401``) instead of answering them for public nodes.
    allowed_origins : iterable of str
        Every allowed ``Origin`` value (the server's own included).
    path : str
        The MCP endpoint.
    request_timeout : float
        Seconds a request may take before it is cancelled (``504`` when nothing was sent yet).
    """

    def __init__(
        self,
        app: Any,
        *,
        tokens: TokenFile | None,
        require_token: bool,
        allowed_origins: Iterable[str],
        path: str = DEFAULT_PATH,
        request_timeout: float = 60.0,
    ) -> None:
        if require_token and tokens is None:
            raise ConceptwalkError("--require-token needs --token-file")
        self.app = app
        self.tokens = tokens
        self.require_token = bool(require_token)
        self.allowed_origins = frozenset(allowed_origins)
        self.path = path
        self.request_timeout = float(request_timeout)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Handle one ASGI connection: refuse it (``403``, ``401``, ``405``) or pass it to the
        SDK's app with the caller its token stands for.

        Parameters
        ----------
        scope : dict
            The ASGI scope.
        receive, send : callable
            The ASGI channels.
        """
        if scope["type"] != "http":  # lifespan (websockets are not served by the SDK's app)
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = scope.get("headers") or []
        origins = [v for k, v in headers if k == b"origin"]
        if origins and (len(origins) > 1 or origins[0].decode("latin-1") not in self.allowed_origins):
            await _reply(send, 403, {"error": "forbidden", "error_description": "Origin not allowed"})
            return
        auth = [v for k, v in headers if k == b"authorization"]
        if len(auth) > 1:
            await _unauthorized(send, "invalid_request", "more than one Authorization header")
            return
        if not auth:
            if self.require_token:
                await _unauthorized(send, None, "this server requires a bearer token")
                return
            caller, identity = Caller.public(), None
        else:
            value = auth[0].decode("latin-1")
            scheme, sep, token = value.partition(" ")
            if scheme.lower() != "bearer" or not sep or not token:
                await _unauthorized(send, "invalid_request", "expected Authorization: Bearer <token>")
                return
            found = self.tokens.lookup(token) if self.tokens is not None else None
            if found is None:  # unknown, revoked, or the file cannot be read: never a public answer
                await _unauthorized(send, "invalid_token", "unknown token")
                return
            identity, caller = found
        if scope.get("method") == "GET" and scope.get("path") == self.path:
            # no server-initiated messages: no SSE stream (the specification's 405)
            await _reply(send, 405, {"error": "method_not_allowed"}, [(b"allow", b"POST, DELETE")])
            return
        scope = dict(scope)
        scope[CALLER_KEY] = caller
        if identity is not None:  # the SDK binds a session to the credential that opened it
            from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
            from mcp.server.auth.provider import AccessToken

            scope["user"] = AuthenticatedUser(AccessToken(token=identity, client_id=identity, scopes=[]))
        started = False

        async def watched_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        import anyio

        # A request that never gets its answer (e.g. a client reusing a JSON-RPC id still in
        # flight) must not hold a task, a connection or a shutdown forever.
        with anyio.move_on_after(self.request_timeout) as timer:
            await self.app(scope, receive, watched_send)
        if timer.cancelled_caught and not started:
            await _reply(send, 504, {"error": "timeout", "error_description": "no answer in time"})


async def _reply(send: Any, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
            + (extra or []),
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _unauthorized(send: Any, error: str | None, description: str) -> None:
    challenge = 'Bearer realm="conceptwalk"' + (f', error="{error}"' if error else "")
    await _reply(
        send,
        401,
        {"error": error or "unauthorized", "error_description": description},
        [(b"www-authenticate", challenge.encode())],
    )


def _caller_of(ctx: Any) -> Caller:
    request = getattr(ctx, "request", None)
    caller = getattr(request, "scope", {}).get(CALLER_KEY) if request is not None else None
    if not isinstance(caller, Caller):  # never answer without the gate's verdict
        raise ConceptwalkError("this request was not authenticated")
    return caller


def build_http_app(
    tools: ToolServer,
    settings: HttpSettings,
    *,
    tokens: TokenFile | None = None,
    require_token: bool = False,
) -> HttpGate:
    """The ASGI app serving ``tools`` over Streamable HTTP (needs the ``mcp`` extra).

    Parameters
    ----------
    tools : ToolServer
        What is served; its own caller and session token are not used (the bearer token is).
    settings : HttpSettings
    tokens : TokenFile, optional
    require_token : bool

    Returns
    -------
    HttpGate
        The gate, wrapping the SDK's Starlette app (``.app``); run it with any ASGI server.
    """
    require_mcp()
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(tools, caller_of=_caller_of)
    origins = [*own_origins(settings.host, settings.port), *settings.allow_origins]
    if is_loopback(settings.host):  # DNS rebinding: the Host must be a loopback name
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=origins,
        )
    else:  # behind a reverse proxy the Host is the proxy's; the gate checks the Origin
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(
        streamable_http_path=settings.path,
        json_response=True,
        max_request_body_size=settings.max_body_bytes,
        session_idle_timeout=settings.session_idle_seconds,
        max_sessions=settings.max_sessions,
        transport_security=security,
        host=settings.host,
    )
    return HttpGate(
        app,
        tokens=tokens,
        require_token=require_token,
        allowed_origins=origins,
        path=settings.path,
        request_timeout=settings.request_seconds,
    )


def _server_class(early: list[int]) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, ending with status 0 after a SIGTERM/SIGINT it drained (uvicorn
        re-raises the signal after its graceful shutdown, which makes the exit status -15)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            sigs = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in sigs}
            for sig in early:  # a signal that came before uvicorn started: stop at once
                self.handle_exit(sig, None)
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return Server


def _protocol_class() -> Any:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        """uvicorn's h11 protocol whose idle timer also runs while a request's head is incomplete
        (uvicorn arms it only after a response and cancels it on any byte received, so a
        connection that never finishes its headers was held forever: a slow-loris client could
        take every connection). Cancelled once a whole head arrives (uvicorn's own
        ``handle_events``), armed again after each response."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

        def data_received(self, data: bytes) -> None:
            self.conn.receive_data(data)  # the timer runs on until the head is whole
            self.handle_events()

    return Protocol


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepted sockets
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConceptwalkError(f"--http: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(512)
    sock.set_inheritable(True)
    return sock


def serve_http(
    tools: ToolServer,
    settings: HttpSettings,
    *,
    tokens: TokenFile | None = None,
    require_token: bool = False,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve ``tools`` over Streamable HTTP until SIGTERM or SIGINT, then finish the calls in
    flight (up to ``settings.drain_seconds``) and return.

    Parameters
    ----------
    tools : ToolServer
    settings : HttpSettings
    tokens : TokenFile, optional
    require_token : bool
    on_listening : callable, optional
        Called with the endpoint's URL once the socket listens (the start-up line).
    """
    require_mcp()
    import uvicorn

    sock = _bind(settings.host, settings.port)
    settings = dataclasses.replace(settings, port=sock.getsockname()[1])  # port 0: the real one
    early: list[int] = []  # SIGTERM/SIGINT between the start-up line and uvicorn's handlers
    previous: dict[int, Any] = {}
    try:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                previous[signum] = signal.signal(signum, lambda num, frame: early.append(num))
        app = build_http_app(tools, settings, tokens=tokens, require_token=require_token)
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        if on_listening is not None:
            on_listening(f"http://{host}:{settings.port}{settings.path}")
        config = uvicorn.Config(
            app,
            access_log=False,  # a request line may carry a token in its query string
            log_level="warning",
            lifespan="on",
            limit_concurrency=settings.max_connections,
            http=_protocol_class(),
            timeout_keep_alive=max(1, round(settings.idle_connection_seconds)),
            timeout_graceful_shutdown=max(1, round(settings.drain_seconds)),
            h11_max_incomplete_event_size=16 * 1024,
            server_header=False,
        )
        _server_class(early)(config).run(sockets=[sock])
    finally:
        sock.close()
        for num, handler in previous.items():
            signal.signal(num, handler)
        sys.stderr.flush()
