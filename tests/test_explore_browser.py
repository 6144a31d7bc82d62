"""The explorer in a real browser (issue 34): headless Chromium from Debian (``apt-get install
chromium chromium-driver``) driven by Selenium through Debian's chromedriver -- nothing downloads
a browser or a driver.

One page session over the fixture KB (tests/explore_fixture.py) served by the real HTTP app
(uvicorn, loopback): a search, a context, a path, a suggestion and a wrapped query; a click on
a drawn node; keyboard navigation; the caller switch; a narrow window. After each step: what
is drawn and listed, and that no node of a scope the caller lacks is in the DOM, in the JSON
the page fetched, or in the counts. A screenshot of each step goes to ``$CW_SCREENSHOTS``
(default ``/tmp/cw-screenshots``).

Skipped when chromium, its driver or selenium is missing (README command 2 on a machine
without them); ``CW_REQUIRE_BROWSER=1`` (set by .ci/extra) turns the skip into a failure.
Run locally: ``apt-get install chromium chromium-driver && pip install -e '.[test,browser]' &&
CW_REQUIRE_BROWSER=1 python -m pytest tests/test_explore_browser.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from explore_fixture import TEAM_A_ONLY, TEAM_B_ONLY, build

REQUIRED = os.environ.get("CW_REQUIRE_BROWSER") == "1"


def _find(*names: str) -> str | None:
    for n in names:
        got = shutil.which(n) or (n if os.path.isabs(n) and os.access(n, os.X_OK) else None)
        if got:
            return got
    return None


CHROMIUM = _find(os.environ.get("CW_CHROMIUM", "chromium"), "/usr/lib/chromium/chromium", "chromium-browser")
DRIVER = _find(os.environ.get("CW_CHROMEDRIVER", "chromedriver"), "/usr/lib/chromium/chromedriver")


def _need(ok: bool, why: str) -> None:
    if not ok:
        if REQUIRED:
            pytest.fail(f"CW_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)


SHOTS = Path(os.environ.get("CW_SCREENSHOTS") or "/tmp/cw-screenshots")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    try:
        import uvicorn  # noqa: F401
        import starlette  # noqa: F401
    except ImportError:
        _need(False, "starlette/uvicorn are not installed (the explore extra)")
    import uvicorn

    from conceptwalk import Caller
    from conceptwalk.kb.store import KnowledgeBase
    from conceptwalk.serve.explore import Explorer, build_app

    path = tmp_path_factory.mktemp("explore") / "kb.db"
    build(path)
    kb = KnowledgeBase.open(path, read_only=True)
    callers = [
        ("public", Caller.public()),
        ("team-a", Caller.with_scopes("team-a")),
        ("team-b", Caller.with_scopes("team-b")),
    ]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = build_app(Explorer(kb, callers), host="127.0.0.1", port=port)
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the explorer did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    srv.should_exit = True
    t.join(10)
    kb.close()


@pytest.fixture(scope="module")
def browser(server):
    _need(CHROMIUM is not None, "chromium is not installed (apt-get install chromium)")
    _need(DRIVER is not None, "chromedriver is not installed (apt-get install chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _need(False, "selenium is not installed (pip install 'conceptwalk[browser]')")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager never downloads a driver
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        opts.add_argument(arg)
    opts.add_argument("--force-device-scale-factor=1")
    drv = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    drv.set_window_size(1280, 900)
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield drv
    drv.quit()


# --------------------------------------------------------------------------- helpers
def _wait(drv: Any, cond: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; status: {_status(drv)!r}")
        time.sleep(0.05)


def _status(drv: Any) -> str:
    from selenium.webdriver.common.by import By

    return drv.find_element(By.ID, "status").text


def _fetched(drv: Any) -> list[dict[str, Any]]:
    return drv.execute_script("return window.cwFetched;")


def _answer(drv: Any, view: str, n_before: int) -> dict[str, Any]:
    """Wait for the page to fetch and draw a new answer of ``view``; its JSON."""
    from selenium.webdriver.common.by import By

    _wait(drv, lambda: len(_fetched(drv)) > n_before, f"the {view} request")
    last = _fetched(drv)[-1]
    if last["status"] == 200:
        _wait(drv, lambda: drv.find_elements(By.CSS_SELECTOR, f'[data-answer="{view}"]'), f"the {view} answer")
    return last


def _submit(drv: Any, view: str, values: dict[str, str]) -> dict[str, Any]:
    from selenium.webdriver.common.by import By

    drv.find_element(By.CSS_SELECTOR, f'nav a[data-view="{view}"]').click()
    form = drv.find_element(By.CSS_SELECTOR, f'form[data-form="{view}"]')
    for name, value in values.items():
        box = form.find_element(By.NAME, name)
        if box.tag_name == "select":
            from selenium.webdriver.support.ui import Select

            Select(box).select_by_visible_text(value)
        else:
            box.clear()
            box.send_keys(value)
    n = len(_fetched(drv))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    return _answer(drv, view, n)


def _switch(drv: Any, label_start: str, view: str) -> dict[str, Any]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    sel = Select(drv.find_element(By.ID, "caller"))
    n = len(_fetched(drv))
    for o in sel.options:
        if o.text.startswith(label_start):
            sel.select_by_visible_text(o.text)
            break
    else:
        raise AssertionError(f"no caller {label_start!r}")
    return _answer(drv, view, n)


def _shot(drv: Any, name: str) -> None:
    drv.save_screenshot(str(SHOTS / f"{name}.png"))


def _never_shows(drv: Any, hidden: set[str], answer: dict[str, Any]) -> None:
    """None of ``hidden`` in the DOM, nor in the JSON the page fetched for this answer."""
    html = drv.page_source
    blob = json.dumps(answer["body"])
    for x in hidden:
        assert x not in html, f"{x} is in the page"
        assert x not in blob, f"{x} is in the fetched answer"


def _drawn(drv: Any, drawing: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [
        e.get_attribute("data-id") for e in drv.find_elements(By.CSS_SELECTOR, f'svg[data-drawing="{drawing}"] g.node')
    ]


# --------------------------------------------------------------------------- the session
def test_explorer_in_chromium(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    drv = browser
    drv.get(server + "#/search")
    _wait(drv, lambda: drv.execute_script("return document.body.dataset.ready === '1'"), "the page to start")
    options = [o.text for o in drv.find_elements(By.CSS_SELECTOR, "#caller option")]
    assert [o.split(" ")[0] for o in options] == ["public", "team-a", "team-b"]
    # the start page: what this caller sees, counted over what it sees
    _wait(drv, lambda: drv.find_elements(By.CSS_SELECTOR, '[data-answer="overview"]'), "the overview")
    ov = _fetched(drv)[-1]
    assert ov["url"].startswith("api/overview") and ov["body"]["nodes"] == 9  # 12 nodes, 3 scoped
    shown = drv.find_element(By.CSS_SELECTOR, '[data-answer="overview"] .summary')
    assert shown.get_attribute("data-count") == "9" and "9 node(s)" in shown.text
    _never_shows(drv, TEAM_A_ONLY | TEAM_B_ONLY, ov)
    _shot(drv, "01-start")

    # ---- search, as team-a, then the same search as public
    drv.find_element(By.ID, "caller").send_keys("team-a")
    a = _submit(drv, "search", {"q": "tokens"})
    ids_a = [h["id"] for h in a["body"]["hits"]]
    assert "file/jwt_secret.py" in ids_a
    rows = drv.find_elements(By.CSS_SELECTOR, '[data-answer="search"] tbody tr')
    assert len(rows) == len(ids_a) == a["body"]["count"]
    assert drv.find_element(By.CSS_SELECTOR, '[data-answer="search"] .summary').get_attribute("data-count") == str(
        len(ids_a)
    )
    _shot(drv, "02-search-team-a")
    p = _switch(drv, "public", "search")
    assert p["status"] == 200 and p["body"]["caller"]["label"] == "public"
    _never_shows(drv, TEAM_A_ONLY | TEAM_B_ONLY, p)
    assert p["body"]["count"] == len(drv.find_elements(By.CSS_SELECTOR, '[data-answer="search"] tbody tr'))
    assert p["body"]["count"] < len(ids_a)
    _shot(drv, "03-search-public")

    # ---- graph_context drawn: seeds marked, every result drawn, nothing hidden
    c = _submit(drv, "context", {"question": "signing keys for tokens", "k": "12"})
    res = c["body"]["result"]
    drawn = _drawn(drv, "context")
    assert sorted(drawn) == sorted([s["id"] for s in res["seeds"]] + [r["id"] for r in res["results"]])
    seeds = [
        e.get_attribute("data-id") for e in drv.find_elements(By.CSS_SELECTOR, 'svg[data-drawing="context"] g.seed')
    ]
    assert seeds == [s["id"] for s in res["seeds"]] and seeds
    assert len(drv.find_elements(By.CSS_SELECTOR, 'svg[data-drawing="context"] line.edge')) == len(c["body"]["edges"])
    _never_shows(drv, TEAM_A_ONLY | TEAM_B_ONLY, c)
    _shot(drv, "04-context-public")
    ca = _switch(drv, "team-a", "context")
    drawn_a = _drawn(drv, "context")
    assert TEAM_A_ONLY & set(drawn_a), "team-a sees its own nodes drawn"
    _never_shows(drv, TEAM_B_ONLY, ca)
    _shot(drv, "05-context-team-a")
    cov = _submit(drv, "context", {"rank": "coverage"})
    assert (
        cov["body"]["rank"] == "coverage"
        and "coverage" in drv.find_element(By.CSS_SELECTOR, '[data-answer="context"]').text
    )

    # ---- a click on a drawn node opens its page
    n = len(_fetched(drv))
    drv.find_element(By.CSS_SELECTOR, 'svg[data-drawing="context"] g.node[data-id="file/jwt_secret.py"] circle').click()
    node = _answer(drv, "node", n)
    page = drv.find_element(By.CSS_SELECTOR, '[data-answer="node"]')
    assert page.get_attribute("data-node-id") == "file/jwt_secret.py"
    assert "team-a" in page.text and "IMPLEMENTED_BY" in page.text
    assert node["body"]["degree"] == len(node["body"]["neighbours"])
    _shot(drv, "06-node-team-a")
    hidden = _switch(drv, "public", "node")  # the same page as public: the same text as a missing id
    assert hidden["status"] == 404 and _status(drv) == "id not found: 'file/jwt_secret.py' \u2014 as public"
    assert not drv.find_elements(By.CSS_SELECTOR, '[data-answer="node"]')
    _shot(drv, "07-node-public-not-found")

    # ---- graph_path drawn as the chain with its edge types
    drv.find_element(By.ID, "caller").send_keys("team-a")
    pa = _submit(drv, "path", {"source": "file/login.py", "target": "doc/key-rotation"})
    r = pa["body"]["result"]
    assert r["found"] and _drawn(drv, "path") == [x["id"] for x in r["nodes"]]
    labels = [e.text for e in drv.find_elements(By.CSS_SELECTOR, 'svg[data-drawing="path"] text.edge-label')]
    assert len(labels) == r["length"] and all(labels)
    assert any(e["type"] in labels[i] for i, st in enumerate(r["steps"]) for e in st["edges"])
    _shot(drv, "08-path-team-a")

    # ---- link_suggest with its shared neighbours drawn
    s = _submit(drv, "suggest", {"concept": "concept/auth", "min_shared": "1"})
    sugg = s["body"]["result"]["suggestions"]
    assert sugg
    shared = {z["id"] for x in sugg for z in x["shared"]}
    assert set(_drawn(drv, "suggest")) == {"concept/auth"} | {x["id"] for x in sugg} | shared
    _shot(drv, "09-suggest-team-a")
    sp = _switch(drv, "public", "suggest")
    _never_shows(drv, TEAM_A_ONLY | TEAM_B_ONLY, sp)
    assert len(sp["body"]["result"]["suggestions"]) < len(sugg)  # jwt_secret.py is not suggested
    assert set(_drawn(drv, "suggest")) <= set(json.dumps(sp["body"]).split('"'))
    _switch(drv, "team-a", "suggest")

    # ---- the wrapped query: flat results, the added items with paths and the four axes per hop
    q = _submit(drv, "query", {"text": "signing tokens"})
    body = q["body"]
    assert body["added"], "the walk adds something on the fixture"
    boxes = drv.find_elements(By.CSS_SELECTOR, "[data-added]")
    assert [b.get_attribute("data-added") for b in boxes] == [x["id"] for x in body["added"]]
    header = drv.find_element(By.CSS_SELECTOR, "[data-added] table thead").text
    for axis in ("authority", "fidelity", "extractionProvenance", "lifecycle"):
        assert axis in header
    absent_cells = drv.find_elements(By.CSS_SELECTOR, "[data-added] [data-absent]")
    n_absent = sum(len(h.get("absent", {})) for x in body["added"] for p in x["paths"] for h in p["hops"])
    assert n_absent and len(absent_cells) >= 1
    assert json.loads(drv.find_element(By.CSS_SELECTOR, "pre[data-event]").text)["candidatesAdded"] == len(
        body["added"]
    )
    concepts = drv.find_element(By.CSS_SELECTOR, '[data-answer="query"]').text
    for cpt in body["concepts"]:
        assert cpt["method"] in concepts
    _shot(drv, "10-query-team-a")
    drv.execute_script("document.querySelector('[data-added]').scrollIntoView()")
    _shot(drv, "10b-query-team-a-provenance")
    qp = _switch(drv, "public", "query")
    _never_shows(drv, TEAM_A_ONLY | TEAM_B_ONLY, qp)
    _shot(drv, "11-query-public")

    # ---- keyboard: '/' goes to the search box, Tab reaches a drawn node, Enter opens it
    body_el = drv.find_element(By.TAG_NAME, "body")
    body_el.send_keys("2")  # the context view
    _wait(drv, lambda: drv.find_element(By.ID, "view-context").is_displayed(), "the context view")
    box = drv.switch_to.active_element
    assert box.get_attribute("name") == "question"
    box.clear()
    n = len(_fetched(drv))
    box.send_keys("login", Keys.ENTER)
    _answer(drv, "context", n)
    first = drv.find_element(By.CSS_SELECTOR, 'svg[data-drawing="context"] g.node')
    target = first.get_attribute("data-id")
    drv.execute_script("arguments[0].focus()", first)
    n = len(_fetched(drv))
    drv.switch_to.active_element.send_keys(Keys.ENTER)
    _answer(drv, "node", n)
    assert drv.find_element(By.CSS_SELECTOR, '[data-answer="node"]').get_attribute("data-node-id") == target
    drv.find_element(By.TAG_NAME, "body").send_keys("/")
    assert drv.switch_to.active_element.get_attribute("name") == "q"
    _shot(drv, "12-keyboard")

    # ---- a narrow window: no sideways scrolling of the page, the drawing shrinks to fit
    drv.get(server + "#/context?question=tokens&caller=1")
    _wait(drv, lambda: drv.find_elements(By.CSS_SELECTOR, '[data-answer="context"]'), "the context answer")
    drv.set_window_size(480, 900)
    time.sleep(0.3)
    overflow = drv.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px at 480px"
    width = drv.execute_script("return document.querySelector('svg.drawing').getBoundingClientRect().width")
    assert 200 < width <= 480
    # the labels stay readable once the drawing has shrunk: at least 10 px on screen
    label_px = drv.execute_script(
        "const s = document.querySelector('svg.drawing'), t = s.querySelector('g.node text');"
        "return parseFloat(getComputedStyle(t).fontSize) * s.getBoundingClientRect().width / s.viewBox.baseVal.width;"
    )
    assert label_px >= 10, f"node labels are {label_px:.1f} px on screen at 480 px"
    _shot(drv, "13-narrow-context")
    drv.set_window_size(1280, 900)

    # ---- nothing the page fetched in the whole session came from anywhere but this server
    urls = drv.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert urls and all(u.startswith(server) for u in urls), urls
