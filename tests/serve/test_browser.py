"""``dpc serve`` in a real headless Chromium (selenium): both tabs, highlighted keywords, no
request beyond the server (an air-gapped lab), and a message for bad input; then the task tabs
with the bundled models: INLI variants with the classifier's labels, SWAG endings with the
committee's scores (a committee fitted on a small pool written here, ``--swag-committee``), and
AFLite on an uploaded 40-problem WinoGrande file with its figure.

Starts the real command (``python -m cli serve``, the default generator SmolLM2-135M and the
bundled graph: about 15 s on 2 cores) on a free port. Needs the ``demo`` extra and the Debian
packages ``chromium`` and ``chromium-driver``; skipped, saying which is missing, otherwise.
``DPC_SERVE_URL=http://127.0.0.1:PORT`` tests a server already running instead.
``DPC_SCREENSHOTS=docs/images`` writes the README's screenshots there; by default they go to a
temporary folder (a test run leaves the tree as it was).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

pytest.importorskip("gradio", reason="dpc serve needs the demo extra: pip install -e '.[demo]'")
pytest.importorskip("selenium", reason="the browser test needs selenium: pip install -e '.[demo]'")

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.tasks.aflite.conftest import winogrande_lines

from .conftest import write_pool

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no headless browser: install the Debian packages chromium and chromium-driver "
    "(.ci/run does)")

#: Seconds to wait for the server to load SmolLM2 and the graph, and for one decode.
START_TIMEOUT = 240
DECODE_TIMEOUT = 240


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if os.environ.get("DPC_SERVE_URL"):  # a server already running (another model, a remote)
        url = os.environ["DPC_SERVE_URL"].rstrip("/") + "/"
        yield {"url": url, "port": urlparse(url).port, "ready": f"server {url}", "seconds": 0.0,
               "committee": False}
        return
    port = _free_port()
    pool = write_pool(tmp_path_factory.mktemp("swag") / "pool")  # the SWAG committee's data
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                                "--swag-committee", str(pool)],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    started = time.perf_counter()
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
    reader.start()  # drained all along: a full pipe would stall the server
    try:
        while not any("ready at" in line for line in lines):
            assert process.poll() is None, "dpc serve exited:\n" + "".join(lines[-20:])
            assert time.perf_counter() - started < START_TIMEOUT, \
                "dpc serve did not start:\n" + "".join(lines[-20:])
            time.sleep(0.2)
        ready = next(line.strip() for line in lines if "ready at" in line)
        yield {"url": f"http://127.0.0.1:{port}/", "port": port, "ready": ready,
               "seconds": time.perf_counter() - started, "committee": True}
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1200,1000", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--metrics-recording-only", "--hide-scrollbars"):
        options.add_argument(flag)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # root (containers, CI) cannot use the sandbox
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("DPC_SCREENSHOTS"):
        folder = Path(os.environ["DPC_SCREENSHOTS"])
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


def _type(driver: webdriver.Chrome, selector: str, text: str) -> None:
    box = driver.find_element(By.CSS_SELECTOR, selector)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    if text:
        box.send_keys(text)


def _requests(driver: webdriver.Chrome) -> list[str]:
    """Every URL the page asked for since the last call (Chromium's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _foreign(urls: list[str], port: int) -> list[str]:
    """The URLs not served by the server (inline ``data:``/``blob:`` resources are local)."""
    out = []
    for url in urls:
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob", "about"):
            continue
        if parsed.hostname not in ("127.0.0.1", "localhost") or parsed.port != port:
            out.append(url)
    return out


def test_the_page_answers_both_tabs_offline(server: dict[str, Any], browser: webdriver.Chrome,
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    shots = _shots(tmp_path_factory)
    driver = browser
    started = time.perf_counter()
    driver.get(server["url"])
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#ce-input textarea, #ce-input input"))
    # Gradio renders the page in parts: under load the button can come after the input
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#ce-submit"))
    page_seconds = time.perf_counter() - started
    print(f"{server['ready']}; page shown in the browser {page_seconds:.1f} s later")

    # bad input: a message on the page, the server alive
    _type(driver, "#ce-input textarea", "")
    driver.find_element(By.CSS_SELECTOR, "#ce-submit").click()
    error = WebDriverWait(driver, DECODE_TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#ce-results .dpc-error"))
    assert "empty" in error[0].text

    # causes of "babies cry": small N and K (SmolLM2 on 2 cores)
    _type(driver, "#ce-input textarea", "babies cry")
    _type(driver, "#ce-n input", "6")
    _type(driver, "#ce-k input", "6")
    driver.find_element(By.CSS_SELECTOR, "#ce-submit").click()
    rows = WebDriverWait(driver, DECODE_TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#ce-results table.dpc-results tbody tr"))
    assert 1 <= len(rows) <= 6
    with_keyword = 0
    for row in rows:
        keyword = row.get_attribute("data-keyword")
        marks = row.find_elements(By.CSS_SELECTOR, "td.dpc-output mark")
        if keyword == "-":  # the plain row: no keyword to highlight
            assert not marks, row.text
            continue
        with_keyword += 1
        assert len(marks) == 1, f"row without its highlighted keyword: {row.text!r}"
        assert marks[0].text == row.get_attribute("data-matched") != ""
        assert row.find_element(By.CSS_SELECTOR, "td.dpc-keyword").text == keyword
    assert with_keyword >= 1, "no row came from a graph keyword"
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "const i = document.querySelector('#ce-graph img');"
        "return i !== null && i.complete && i.naturalWidth > 0;"))  # the graph figure is drawn
    time.sleep(0.5)
    driver.save_screenshot(str(shots / "serve-causes.png"))

    # constraints: two sets, both met and highlighted, beside the unconstrained output
    driver.find_element(By.XPATH, "//button[@role='tab'][contains(., 'Constraints')]").click()
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#cs-submit").is_displayed())
    _type(driver, "#cs-input textarea", "The weather today")
    _type(driver, "#cs-sets textarea", "rain|rained|raining\numbrella|umbrellas")
    assert driver.find_element(By.CSS_SELECTOR, "#cs-sets textarea").get_attribute(
        "value") == "rain|rained|raining\numbrella|umbrellas"
    _type(driver, "#cs-max-new-tokens input", "16")
    driver.find_element(By.CSS_SELECTOR, "#cs-submit").click()
    output = WebDriverWait(driver, DECODE_TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#cs-results .dpc-constrained"))[0]
    sets = driver.find_elements(By.CSS_SELECTOR, "#cs-results li.dpc-set")
    assert len(sets) == 2
    assert [s.get_attribute("data-satisfied") for s in sets] == ["true", "true"]
    marks = {m.text.lower() for m in output.find_elements(By.CSS_SELECTOR, "mark")}
    assert marks & {"rain", "rained", "raining"} and marks & {"umbrella", "umbrellas"}, marks
    assert driver.find_element(By.CSS_SELECTOR, "#cs-results .dpc-unconstrained").text
    driver.save_screenshot(str(shots / "serve-constraints.png"))

    urls = _requests(driver)
    assert any(urlparse(u).port == server["port"] for u in urls), "the log saw no request"
    foreign = _foreign(urls, server["port"])
    assert not foreign, f"the page asked for resources beyond the server: {foreign[:5]}"
    for name in ("serve-causes.png", "serve-constraints.png"):
        assert (shots / name).read_bytes()[:4] == b"\x89PNG"


def _tab(driver: webdriver.Chrome, title: str, button: str) -> None:
    driver.find_element(By.XPATH, f"//button[@role='tab'][contains(., '{title}')]").click()
    WebDriverWait(driver, 60).until(
        lambda d: d.find_element(By.CSS_SELECTOR, button).is_displayed())


def test_the_task_tabs_answer(server: dict[str, Any], browser: webdriver.Chrome,
                              tmp_path: Path) -> None:
    from tasks.datasets import INLI_LABELS

    driver = browser
    driver.get(server["url"])
    WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#ce-submit"))

    # INLI: the three variants, each with the classifier's label and probability
    _tab(driver, "INLI variants", "#inli-submit")
    _type(driver, "#inli-premise textarea", "Anna stayed at the office until midnight to "
          "finish the report before the deadline.")
    _type(driver, "#inli-implied textarea", "Anna works hard.")
    _type(driver, "#inli-beams input", "2")
    _type(driver, "#inli-max-new-tokens input", "24")
    driver.find_element(By.CSS_SELECTOR, "#inli-submit").click()
    rows = WebDriverWait(driver, DECODE_TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#inli-results tr.dpc-variant"))
    assert [r.get_attribute("data-label") for r in rows] == [
        "explicit_entailment", "neutral", "contradiction"]
    for row in rows:
        assert row.find_element(By.CSS_SELECTOR, "td.dpc-output").text.strip()
        assert row.get_attribute("data-predicted") in INLI_LABELS
        assert row.find_element(By.CSS_SELECTOR, "td.dpc-predicted").text in INLI_LABELS
        assert 0.25 <= float(row.find_element(By.CSS_SELECTOR, "td.dpc-score").text) <= 1.0
        assert row.get_attribute("data-agrees") == str(
            row.get_attribute("data-predicted") == row.get_attribute("data-label")).lower()

    # SWAG: sampled endings, each scored by the committee, the likeliest first
    _tab(driver, "SWAG endings", "#swag-submit")
    _type(driver, "#swag-input textarea", "A woman is standing in a kitchen holding a pan. she")
    _type(driver, "#swag-endings input", "3")
    driver.find_element(By.CSS_SELECTOR, "#swag-submit").click()
    rows = WebDriverWait(driver, DECODE_TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#swag-results tr.dpc-ending"))
    assert 1 <= len(rows) <= 3
    assert all(r.find_element(By.CSS_SELECTOR, "td.dpc-output").text.strip() for r in rows)
    committee = driver.find_element(By.CSS_SELECTOR, "#swag-results .dpc-committee").text
    if server["committee"]:
        scores = [float(r.get_attribute("data-ensemble")) for r in rows]
        assert scores == sorted(scores, reverse=True)
        assert committee.startswith("committee: mlp, bow, cnn, lstm, fitted on 12 4-way"), committee
    else:
        assert "without --swag-committee" in committee

    # AFLite: an uploaded file, kept and removed instances, the figure
    data = tmp_path / "wg.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in winogrande_lines(40)))
    _tab(driver, "AFLite", "#aflite-submit")
    driver.find_element(By.CSS_SELECTOR, "#aflite-file input[type=file]").send_keys(str(data))
    WebDriverWait(driver, 120).until(  # uploaded: the component names the file
        lambda d: "wg.jsonl" in (d.find_element(By.CSS_SELECTOR, "#aflite-file")
                                 .get_attribute("innerHTML") or ""))
    _type(driver, "#aflite-n input", "16")
    driver.find_element(By.CSS_SELECTOR, "#aflite-submit").click()
    summary = WebDriverWait(driver, DECODE_TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#aflite-results #aflite-summary"))[0].text
    assert "of 40 instances (winogrande, twins)" in summary, summary
    instances = driver.find_elements(By.CSS_SELECTOR, "#aflite-results tr.dpc-instance")
    kept = [r for r in instances if r.get_attribute("data-kept") == "true"]
    assert len(instances) == 40 and summary.startswith(f"kept {len(kept)}, removed "
                                                       f"{40 - len(kept)} ")
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(  # in view: images load lazily
        "const i = document.querySelector('#aflite-figure img');"
        "if (i !== null) i.scrollIntoView();"
        "return i !== null && i.complete && i.naturalWidth > 0;"))
    foreign = _foreign(_requests(driver), server["port"])
    assert not foreign, f"the page asked for resources beyond the server: {foreign[:5]}"
