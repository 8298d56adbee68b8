"""Who may drive ``dpc serve``: the ``Host`` and ``Origin`` of every request, and the content
type of the JSON API's bodies, checked before any route runs.

A web page the user happens to visit can send requests to a server on the user's machine:

* a cross-origin ``POST`` with ``Content-Type: text/plain`` needs no CORS preflight, so the
  browser sends it and the server would run it (CSRF): the JSON API takes only
  ``application/json`` bodies (HTTP 415 otherwise), which a cross-origin page cannot send
  without a preflight, and every request whose ``Origin`` is not the server's own is refused
  (HTTP 403), Gradio's routes included;
* a page on a domain that the attacker points at 127.0.0.1 (DNS rebinding) is same-origin
  with itself, so its requests carry ``Host: evil.example:7860``: a server listening on a
  loopback address answers only ``Host`` names that mean this machine (``localhost``,
  ``127.0.0.1``, ``[::1]`` and the address it listens on), on any port (an SSH tunnel may
  forward another one).

A server started to listen beyond this machine (``--host 0.0.0.0``, a LAN address) is
reached under names it cannot know (its DNS names, a proxy's), so it accepts any ``Host``;
the ``Origin`` check still applies. Requests without an ``Origin`` (``curl``,
``gradio_client``, same-origin ``GET``) are not cross-origin requests from a browser and pass.

>>> hosts = allowed_hosts("127.0.0.1")
>>> check_request("POST", "/api/generate", {"host": "127.0.0.1:7860",
...               "content-type": "application/json"}, hosts)
>>> check_request("POST", "/api/generate", {"host": "evil.example:7860",
...               "content-type": "application/json"}, hosts)
(403, 'Host header (=evil.example:7860) is not this server: use http://localhost:PORT/ or http://127.0.0.1:PORT/')
>>> check_request("POST", "/api/generate", {"host": "localhost:7860",
...               "origin": "http://evil.example", "content-type": "text/plain"}, hosts)
(403, 'cross-origin request refused: Origin (=http://evil.example) is not this server (http://localhost:7860)')
>>> check_request("POST", "/api/generate", {"host": "localhost:7860",
...               "content-type": "text/plain"}, hosts)
(415, 'the request body must be JSON, sent with Content-Type: application/json (got text/plain)')
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

__all__ = ["RequestGuard", "allowed_hosts", "check_request", "host_name", "is_loopback"]

#: ``Host`` names that mean this machine.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: Routes whose ``POST`` bodies must be JSON (Gradio's own routes take uploads too).
JSON_ROUTES = "/api/"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name, IPv6 with or without brackets) is reachable only
    from this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("[::1]")
    (True, True, True)
    >>> is_loopback("0.0.0.0"), is_loopback("example.org")
    (False, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(listen: str) -> frozenset[str] | None:
    """The ``Host`` names a server listening on ``listen`` answers: those that mean this
    machine for a loopback address; ``None`` (any) beyond it.

    >>> sorted(allowed_hosts("127.0.0.1"))
    ['127.0.0.1', '::1', 'localhost']
    >>> sorted(allowed_hosts("127.0.0.2"))
    ['127.0.0.1', '127.0.0.2', '::1', 'localhost']
    >>> print(allowed_hosts("0.0.0.0"))
    None
    """
    if not is_loopback(listen):
        return None
    return LOOPBACK_NAMES | {listen.strip("[]").lower()}


def host_name(host: str) -> str:
    """The name in a ``Host`` header or an origin's authority, without its port and brackets,
    lower-case.

    >>> host_name("LocalHost:7860"), host_name("[::1]:7860"), host_name("127.0.0.1")
    ('localhost', '::1', '127.0.0.1')
    """
    host = host.strip().lower()
    if host.startswith("["):  # [IPv6]:port
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _authority(origin: str) -> str | None:
    """``host[:port]`` of an ``Origin`` (``scheme://host[:port]``), without a default port;
    ``None`` for an opaque origin (``null``) or anything else."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
        return None
    default = ":80" if scheme == "http" else ":443"
    return rest.removesuffix(default)


def check_request(method: str, path: str, headers: Mapping[str, str],
                  hosts: frozenset[str] | None) -> tuple[int, str] | None:
    """``(status, message)`` when the request must be refused, else ``None``.

    ``headers`` have lower-case names; ``hosts`` is :func:`allowed_hosts` (``None``: any).
    In order: the ``Host`` (403), the ``Origin`` (403: present, it must be the ``Host``'s),
    and a JSON API ``POST``'s content type (415).
    """
    host = headers.get("host", "")
    if hosts is not None and host_name(host) not in hosts:
        return 403, (f"Host header (={host[:100]}) is not this server: use "
                     "http://localhost:PORT/ or http://127.0.0.1:PORT/")
    origin = headers.get("origin")
    if origin is not None:
        authority = _authority(origin)
        own = host.strip().lower()
        for default in (":80", ":443"):
            own = own.removesuffix(default)
        if authority is None or authority != own:
            return 403, (f"cross-origin request refused: Origin (={origin[:100]}) is not this "
                         f"server (http://{host[:100]})")
    if method == "POST" and path.startswith(JSON_ROUTES):
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return 415, ("the request body must be JSON, sent with Content-Type: "
                         f"application/json (got {kind[:100] or 'no content type'})")
    return None


class RequestGuard:
    """ASGI middleware: :func:`check_request` on every HTTP request (and websocket) before
    the app sees it; a refused request is answered ``{"error": message}`` with its status."""

    def __init__(self, app: Any, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for name, value in scope.get("headers", []):
            key = name.decode("latin-1").lower()
            if key not in headers:  # the first of repeated headers
                headers[key] = value.decode("latin-1")
        refused = check_request(scope.get("method", "GET"), scope.get("path", ""), headers,
                                self.hosts)
        if refused is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refused[1][:120]})
            return
        from starlette.responses import JSONResponse

        await JSONResponse({"error": refused[1]}, status_code=refused[0])(scope, receive, send)
