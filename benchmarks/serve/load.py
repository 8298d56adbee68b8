"""Load benchmark of ``dpc serve``: concurrent clients over loopback, beside the CLI.

Starts ``python -m cli serve`` (the default generator, SmolLM2-135M, and the bundled graph) on a
free port and measures

* start-up: seconds to the "ready" line (and where they went), and to the first page served;
* one request, then ``--clients`` threads each sending ``--requests`` requests at once (every
  request a different input/direction, so the pipeline's decode cache never answers): every
  answer checked (HTTP 200, the input and direction echoed, 1..K outputs, every keyword row's
  output holding its matched form), none dropped; p50/p95 latency (client side, queueing
  included) and throughput;
* the server's resident memory (VmRSS) after the first request and after the run;
* ``dpc generate --json`` on the first ``--cli-inputs`` inputs in one process: its wall time
  (cold start included), and the same rows as the server's answers for those inputs.

Run it under the CPU lock (it uses both cores for a few minutes)::

    flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 .venv/bin/python benchmarks/serve/load.py
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

SENTENCES = [
    "babies cry", "it rained all night", "the man lost his job", "she studied hard",
    "the car broke down", "he ate too much", "the river flooded", "the team won the game",
    "the lights went out", "she missed the bus", "the dog barked", "he forgot his keys",
    "the ice melted", "they moved to a new city", "the plant died", "he caught a cold",
    "the store closed early", "she laughed loudly", "the bridge collapsed", "he got a promotion",
    "the milk went sour", "the phone rang", "the children were tired", "the price went up",
    "she broke her leg", "the glass shattered", "the crowd cheered", "he was late for work",
    "the snow fell", "the baby smiled", "the computer crashed", "she bought a new dress",
    "the fire spread", "he drank coffee", "the road was icy", "the music stopped",
    "the tree fell", "she won the lottery", "the boat sank", "the students passed the exam",
    "the oven was hot", "he shouted at the waiter",
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _post(url: str, body: dict[str, Any], timeout: float = 600) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def _check(body: dict[str, Any], request: dict[str, Any], k: int) -> str | None:
    """What is wrong with an answer, or ``None``."""
    results = body.get("results", [])
    if len(results) != 1:
        return f"{len(results)} results"
    result = results[0]
    if result["input"] != request["input"] or result["direction"] != request["direction"]:
        return f"answer for {result['input']!r}/{result['direction']}"
    if not 1 <= len(result["outputs"]) <= k:
        return f"{len(result['outputs'])} outputs"
    for out in result["outputs"]:
        if out["keyword"] and (not out["matched"] or out["matched"] not in out["text"]):
            return f"keyword {out['keyword']!r} not in {out['text']!r}"
    return None


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def markdown(report: dict[str, Any]) -> str:
    """The report as the table of ``RESULTS.md``."""
    r = report
    rows = [
        ("requests sent / answered / wrong", f"{r['sent']} / {r['answered']} / {r['wrong']}"),
        ("options", ", ".join(f"{k}={v}" for k, v in r["options"].items())),
        (f"wall time of the {r['sent']} requests", f"{r['wall_seconds']} s"),
        ("throughput", (f"{r['throughput_per_s']} requests/s "
                       f"({r['service_seconds_per_request']} s of decoding each)")),
        ("latency p50 / p95 / max (client side, queueing included)",
         f"{r['p50_seconds']} / {r['p95_seconds']} / {r['max_seconds']} s"),
        ("first request alone", f"{r['first_request_seconds']} s"),
        ("server RSS after the first request / after the run",
         (f"{r['rss_after_first_mb']} / {r['rss_after_run_mb']} MB "
         f"({r['rss_growth_percent']:+} %)")),
        (("`dpc generate --json` on the first inputs, cold, in "
         f"{r['cli_processes']} process(es)"),
         (f"{r['cli_inputs']} inputs in {r['cli_wall_seconds']} s; same rows as the server for "
         f"{r['cli_same_rows']} of {r['cli_inputs']}")),
        ("server start → ready / page served", f"{r['ready_seconds']} / {r['page_seconds']} s"),
    ]
    lines = ["| | |", "|---|---|", *[f"| {a} | {b} |" for a, b in rows]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=5, help="per client")
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--m", type=int, default=2)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=12)
    parser.add_argument("--cli-inputs", type=int, default=8)
    parser.add_argument("--model", default=None, help="generator (default: dpc's default)")
    parser.add_argument("--graph", default=None, help="graph file (default: the bundled one)")
    parser.add_argument("--out", type=Path, default=None, help="write the numbers as JSON")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="write the numbers as a Markdown table")
    args = parser.parse_args(argv)
    options = {"n": args.n, "m": args.m, "k": args.k, "max_new_tokens": args.max_new_tokens}
    requests = [{"input": s, "direction": d, **options}
                for d in ("cause", "effect") for s in SENTENCES]
    total = args.clients * args.requests
    if total + 1 > len(requests):
        parser.error(f"at most {len(requests) - 1} requests (distinct inputs)")
    first, requests = requests[-1], requests[:total]

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                               "--max-queue", str(args.clients + 4),
                               *(["--model", args.model] if args.model else []),
                               *(["--graph", args.graph] if args.graph else [])], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(server.stderr or ()), daemon=True).start()
    report: dict[str, Any] = {"model": args.model or "default (smollm2-135m)",
                              "options": options, "clients": args.clients,
                              "requests_per_client": args.requests}
    try:
        while not any("ready at" in line for line in lines):
            if server.poll() is not None:
                raise SystemExit("dpc serve exited:\n" + "".join(lines))
            time.sleep(0.05)
        report["ready_seconds"] = round(time.perf_counter() - started, 2)
        report["ready_line"] = next(line.strip() for line in lines if "ready at" in line)
        with urllib.request.urlopen(base + "/", timeout=60) as page:
            page.read()
        report["page_seconds"] = round(time.perf_counter() - started, 2)

        one = time.perf_counter()
        status, body = _post(base + "/api/generate", first)
        assert status == 200 and _check(body, first, args.k) is None, (status, body)
        report["first_request_seconds"] = round(time.perf_counter() - one, 2)
        report["rss_after_first_mb"] = round(_rss_mb(server.pid), 1)

        answers: list[tuple[int, dict[str, Any], float, dict[str, Any]]] = []
        lock = threading.Lock()

        def client(index: int) -> None:
            for j in range(args.requests):
                request = requests[index * args.requests + j]
                sent = time.perf_counter()
                status, body = _post(base + "/api/generate", request)
                with lock:
                    answers.append((status, body, time.perf_counter() - sent, request))

        run = time.perf_counter()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - run
        report["rss_after_run_mb"] = round(_rss_mb(server.pid), 1)
        wrong = [(s, _check(b, r, args.k) if s == 200 else b) for s, b, _, r in answers
                 if s != 200 or _check(b, r, args.k)]
        latencies = [seconds for _, _, seconds, _ in answers]
        report.update(
            sent=total, answered=len(answers), wrong=len(wrong), wrong_examples=wrong[:3],
            wall_seconds=round(wall, 1), throughput_per_s=round(len(answers) / wall, 3),
            p50_seconds=round(_percentile(latencies, 0.5), 2),
            p95_seconds=round(_percentile(latencies, 0.95), 2),
            max_seconds=round(max(latencies), 2),
            service_seconds_per_request=round(wall / len(answers), 2),
            rss_growth_percent=round(100 * (report["rss_after_run_mb"]
                                            / report["rss_after_first_mb"] - 1), 1))
        served = {(r["input"], r["direction"]): b["results"][0] for s, b, _, r in answers
                  if s == 200}
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()

    # the CLI on the first inputs, in one process (cold start included)
    cli_requests = requests[: args.cli_inputs]
    by_direction: dict[str, list[str]] = {}
    for r in cli_requests:
        by_direction.setdefault(r["direction"], []).append(r["input"])
    cli_wall, same = 0.0, 0
    for direction, inputs in by_direction.items():
        command = [sys.executable, "-m", "cli", "generate", "--json", "--direction", direction,
                   *[f"--{k.replace('_', '-')}={v}" for k, v in options.items()],
                   *(["--model", args.model] if args.model else []),
                   *(["--graph", args.graph] if args.graph else [])]
        for text in inputs:
            command += ["--input", text]
        began = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True,
                              env={**os.environ, "TQDM_DISABLE": "1"})
        cli_wall += time.perf_counter() - began
        for line in done.stdout.splitlines():
            result = json.loads(line)
            mine = served[(result["input"], direction)]
            same += [o["text"] for o in result["outputs"]] == [o["text"] for o in mine["outputs"]]
    report.update(cli_inputs=len(cli_requests), cli_wall_seconds=round(cli_wall, 1),
                  cli_processes=len(by_direction), cli_same_rows=same)
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(report))
    ok = report["wrong"] == 0 and report["answered"] == total and same == len(cli_requests)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
