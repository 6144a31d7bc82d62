"""Network helpers shared by the servers (the explorer and the MCP HTTP transport); no optional
dependency is imported here."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback address: ``localhost`` (any case), ``127.0.0.0/8`` or
    ``::1`` (with or without the brackets of a URL).

    Parameters
    ----------
    host : str

    Returns
    -------
    bool

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("[::1]"), is_loopback("LocalHost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
