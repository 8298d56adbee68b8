"""``dpc serve``: the web page and JSON API (:mod:`serve.app`) on a local port.

Gradio and uvicorn come with the optional ``demo`` extra (``pip install -e ".[demo]"``) and are
imported only when the command runs, so ``dpc`` works without them; without them ``dpc serve``
says so in one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from dpc_errors import DpcError, check_int
from serve.guard import is_loopback

__all__ = ["add_serve_parser", "is_loopback", "serve_command"]

EXTRA_MISSING = ("dpc serve: error: the web page needs the demo extra ({name} is not installed): "
                 "pip install -e \".[demo]\"")


def add_serve_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpc serve``."""
    p = sub.add_parser("serve", help="a web page and JSON API for causes, effects and constraints",
                       description="Serve the guided generation (tab 'Causes and effects'), "
                       "the constrained decoder (tab 'Constraints') and the task tabs (INLI "
                       "variants, SWAG endings, AFLite) as a web page and an HTTP JSON API "
                       "(POST /api/generate, /api/constrain, /api/inli, /api/swag, "
                       "/api/aflite). The generator and graph load once, before the server "
                       "listens; a task tab's models once, at its first request. Requests from "
                       "other web sites (a foreign Origin) are refused, and JSON bodies must be "
                       "application/json.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only, and only "
                   "requests whose Host is localhost, 127.0.0.1 or [::1] are answered; anything "
                   "else is reachable from the network, with a warning, and any Host is "
                   "answered). A request whose Origin is another site is always refused")
    p.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    p.add_argument("--max-queue", type=int, default=32, metavar="N",
                   help="requests held at once, the running one included; more are answered "
                   "'busy' (HTTP 503) (default 32)")
    p.add_argument("--model", action="append", default=None, metavar="MODEL",
                   help="generator, as for dpc generate: smollm2-ecare (the default), smollm2-135m, "
                   "'bundled', or a model folder. Repeat it to offer more models to the "
                   "constraints tab and POST /api/constrain (--model A --model B: A generates, "
                   "a request's \"model\" is \"default\" or B); no other model is ever loaded")
    p.add_argument("--graph", default=None, help="Cause Effect Graph file (default: the bundled one)")
    p.add_argument("--swag-committee", default=None, metavar="DIR",
                   help="a pool folder of `dpc swag oversample` (filtered by `dpc swag filter` "
                   "or not): the SWAG tab scores its endings with a committee fitted on it, "
                   "once, at the tab's first request (none is bundled: without it the tab "
                   "shows the endings with their log-probabilities only, and says so)")
    p.set_defaults(func=serve_command)
    return p


def _check_port(host: str, port: int) -> None:
    check_int("--port", port, 1, 65535, quote=False)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            raise DpcError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None


def _import_web(into: dict[str, Any]) -> None:
    """Import the web layer into ``into`` (run in a thread while the model loads)."""
    began = time.perf_counter()
    try:
        import uvicorn

        from serve.app import build_app
    except ImportError as err:
        into["error"] = err
        return
    into.update(uvicorn=uvicorn, build_app=build_app, seconds=time.perf_counter() - began)


def serve_command(args: argparse.Namespace) -> int:
    """Load the models, build the app, listen until interrupted; print where the time went."""
    started = time.perf_counter()
    try:
        from serve.service import Service

        models = args.model or [None]
        service = Service(model=models[0], graph=args.graph, models=models[1:],
                          max_queue=args.max_queue)
        _check_port(args.host, args.port)
        committee = getattr(args, "swag_committee", None)
        if committee is not None and not (Path(committee) / "pool.jsonl").is_file():
            raise DpcError(f"--swag-committee {committee!r} is not a pool folder of `dpc swag "
                           "oversample` (no pool.jsonl)")
    except DpcError as err:
        print(f"dpc serve: error: {err}", file=sys.stderr)
        return 2
    missing = [name for name in ("gradio", "uvicorn", "fastapi") if find_spec(name) is None]
    if missing:
        print(EXTRA_MISSING.format(name=missing[0]), file=sys.stderr)
        return 2
    if not is_loopback(args.host):
        print(f"dpc serve: warning: listening on {args.host}, beyond this machine: anyone who "
              "can reach it can use the models (there is no login)", file=sys.stderr)
    # Gradio is imported while the model loads (about 2 s of start-up saved on 2 cores).
    web: dict[str, Any] = {}
    importer = threading.Thread(target=_import_web, args=(web,), daemon=True)
    importer.start()
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        service.load()
    except DpcError as err:
        print(f"dpc serve: error: {err}", file=sys.stderr)
        return 2
    loaded = time.perf_counter()
    importer.join()
    if "error" in web:
        print(EXTRA_MISSING.format(name=web["error"].name or "gradio"), file=sys.stderr)
        return 2
    imported = time.perf_counter()
    uvicorn, build_app = web["uvicorn"], web["build_app"]
    from serve.tabs import default_tabs

    app = build_app(service, default_tabs(committee), host=args.host)
    built = time.perf_counter()
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port,
                                           log_level="warning", timeout_graceful_shutdown=2))

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.started:
            ready = time.perf_counter()
            shown = f"[{args.host}]" if ":" in args.host else args.host
            print(f"dpc serve: ready at http://{shown}:{args.port}/ in {ready - started:.1f} s "
                  f"(model and graph {loaded - started:.1f} s, with Gradio imported meanwhile "
                  f"in {web['seconds']:.1f} s; waiting for it {imported - loaded:.1f} s, page "
                  f"{built - imported:.1f} s, server {ready - built:.1f} s); Ctrl-C stops it",
                  file=sys.stderr, flush=True)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
    return 0
