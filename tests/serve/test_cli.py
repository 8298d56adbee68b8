"""``dpc serve``'s command line: its errors are one line and exit status 2."""

from __future__ import annotations

import socket

import pytest

import serve.cli
from cli import build_parser, main
from serve.cli import is_loopback


def test_the_defaults_bind_loopback() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.max_queue, args.model, args.graph) == \
        ("127.0.0.1", 7860, 32, None, None)
    assert is_loopback(args.host) and is_loopback("::1") and not is_loopback("0.0.0.0")
    assert not is_loopback("example.org")


@pytest.mark.parametrize(("argv", "message"), [
    (["serve", "--port", "0"], "--port (=0) must be an integer from 1 to 65535"),
    (["serve", "--port", "70000"], "--port (=70000) must be an integer from 1 to 65535"),
    (["serve", "--max-queue", "0"], "--max-queue (=0) must be an integer from 1 to 10000"),
])
def test_bad_options_are_one_line(argv: list[str], message: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"dpc serve: error: {message}\n"


def test_a_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dpc serve: error: cannot listen on 127.0.0.1:{port}: ")
    assert err.count("\n") == 1


def test_without_the_demo_extra_it_says_so(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(serve.cli, "find_spec",
                        lambda name: None if name == "gradio" else object())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err == ('dpc serve: error: the web page needs the demo extra (gradio is not '
                   'installed): pip install -e ".[demo]"\n')


def test_repeated_models_are_the_generator_then_those_offered(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import serve.service
    from dpc_errors import DpcError

    seen: dict[str, object] = {}

    def service(**values: object) -> None:
        seen.update(values)
        raise DpcError("stopped before loading")

    monkeypatch.setattr(serve.service, "Service", service)
    assert main(["serve", "--model", "bundled", "--model", "/models/a", "--model", "b"]) == 2
    assert (seen["model"], seen["models"]) == ("bundled", ["/models/a", "b"])
    assert main(["serve"]) == 2
    assert (seen["model"], seen["models"]) == (None, [])
    assert capsys.readouterr().err.count("dpc serve: error: stopped before loading\n") == 2
