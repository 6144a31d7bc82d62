"""The explorer's fixture knowledge base: a small software KB with two teams' scoped nodes,
aliases, and provenance on the edges (every axis present on some edges, absent on others), so
every view of the page has something to draw and every caller sees something different."""

from __future__ import annotations

from typing import Any

#: The ids only a caller with scope team-a may see, and those only team-b may see.
TEAM_A_ONLY = {"file/jwt_secret.py", "doc/key-rotation"}
TEAM_B_ONLY = {"file/billing.py"}


def rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str]]]:
    """(nodes, edges, aliases) of the fixture."""
    c = "CONCEPT"
    nodes = [
        {"id": "concept/auth", "type": c, "title": "Authentication", "body": "Login, sessions and access tokens."},
        {"id": "concept/tokens", "type": c, "title": "Access tokens", "body": "Signed JWT tokens with expiry."},
        {"id": "concept/sessions", "type": c, "title": "Sessions", "body": "Server-side session state."},
        {"id": "concept/crypto", "type": c, "title": "Cryptography", "body": "Signing keys and hashing."},
        {"id": "concept/billing", "type": c, "title": "Billing", "body": "Invoices and payment tokens."},
        {"id": "doc/login-guide", "type": "DOC", "title": "Login guide", "body": "How the login flow uses tokens."},
        {"id": "doc/token-faq", "type": "DOC", "title": "Token FAQ", "body": "Why tokens expire; refresh tokens."},
        {
            "id": "doc/key-rotation",
            "type": "DOC",
            "title": "Key rotation runbook",
            "body": "Rotate the signing keys of the tokens.",
            "scopes": ["team-a"],
        },
        {"id": "file/login.py", "type": "FILE", "title": "login.py", "body": "def login(user, password): ..."},
        {"id": "file/session.py", "type": "FILE", "title": "session.py", "body": "class Session: tokens, expiry"},
        {
            "id": "file/jwt_secret.py",
            "type": "FILE",
            "title": "jwt_secret.py",
            "body": "SECRET signing key loader for tokens",
            "scopes": ["team-a"],
        },
        {
            "id": "file/billing.py",
            "type": "FILE",
            "title": "billing.py",
            "body": "charge(card, tokens)",
            "scopes": ["team-b"],
        },
    ]
    tagged = {"authority": "canonical", "extraction_method": "TAGGED_CONCEPT", "extraction_confidence": 1.0}
    edges = [
        {"src": "concept/auth", "dst": "concept/tokens", "type": "RELATED_TO", "authority": "canonical"},
        {"src": "concept/auth", "dst": "concept/sessions", "type": "RELATED_TO", "lifecycle": "active"},
        {"src": "concept/tokens", "dst": "concept/crypto", "type": "RELATED_TO", "fidelity": "high"},
        {"src": "concept/sessions", "dst": "concept/tokens", "type": "RELATED_TO"},
        {"src": "concept/billing", "dst": "concept/tokens", "type": "RELATED_TO"},
        {"src": "concept/auth", "dst": "file/login.py", "type": "IMPLEMENTED_BY", **tagged},
        {"src": "concept/sessions", "dst": "file/session.py", "type": "IMPLEMENTED_BY", **tagged},
        {
            "src": "concept/tokens",
            "dst": "file/session.py",
            "type": "IMPLEMENTED_BY",
            "extraction_method": "TAGGED_CONCEPT",
            "extraction_confidence": 0.8,
        },
        {"src": "concept/tokens", "dst": "file/jwt_secret.py", "type": "IMPLEMENTED_BY", **tagged},
        {"src": "concept/crypto", "dst": "file/jwt_secret.py", "type": "IMPLEMENTED_BY", "authority": "code"},
        {"src": "concept/billing", "dst": "file/billing.py", "type": "IMPLEMENTED_BY", **tagged},
        {"src": "concept/tokens", "dst": "file/billing.py", "type": "RELATED_TO"},
        {"src": "concept/auth", "dst": "doc/login-guide", "type": "EXPLAINED_BY", "fidelity": "reviewed"},
        {"src": "concept/tokens", "dst": "doc/token-faq", "type": "EXPLAINED_BY"},
        {"src": "concept/crypto", "dst": "doc/key-rotation", "type": "EXPLAINED_BY", "lifecycle": "draft"},
        {"src": "doc/login-guide", "dst": "file/login.py", "type": "MENTIONS"},
        {"src": "doc/token-faq", "dst": "file/session.py", "type": "MENTIONS"},
        {"src": "doc/key-rotation", "dst": "file/jwt_secret.py", "type": "MENTIONS"},
        {"src": "file/login.py", "dst": "file/session.py", "type": "IMPORTS"},
        {"src": "file/session.py", "dst": "file/jwt_secret.py", "type": "IMPORTS"},
    ]
    aliases = [("login", "concept/auth"), ("jwt", "concept/tokens"), ("signing", "concept/crypto")]
    for n in nodes:
        n.setdefault("scopes", None)
    return nodes, edges, aliases


def build(path: Any) -> None:
    """Write the fixture into a new store file at ``path``."""
    from conceptwalk.kb.store import KnowledgeBase

    nodes, edges, aliases = rows()
    with KnowledgeBase.open(path) as kb:
        kb.add_nodes(nodes)
        kb.add_edges(edges)
        kb.add_aliases(aliases)
        kb.graph()  # the snapshot beside it, as a real KB has one
