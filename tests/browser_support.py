"""What the Chromium tests share: how Debian's Chromium is started, the app they open, how a page is opened
and waited for, and where screenshots go.

tests/conftest.py registers this module as a plugin, so every test file has its fixtures:
- ``browser``: one headless Chromium per test module.
- ``arena``: the default offline app (bundled corpus, offline baselines, votes in a temporary folder) on a
  loopback port, one per module; a module that needs other contestants defines its own ``arena``.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"  # git-ignored; look at them
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync")

WIDTHS = [(1280, 900), (390, 844)]  # a laptop and a phone: every page is looked at in both
VOTES_OPEN = "() => !document.querySelector('#vote-a').disabled"
REVEALED = "() => document.querySelector('#model-names').innerText.includes('Model A:')"
KEY_JS = "() => localStorage.getItem('sciarena-browser-key')"  # set by the page-load script
BOARD_SHOWS = "text => (document.querySelector('#leaderboard-table')?.innerText || '').includes(text)"


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (a playwright Browser) for the duration of the block."""
    # Imported here for start-up time: the not-slow suite never drives a browser.
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `bash scripts/test` installs Debian's chromium package")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(LAUNCH_ARGS))
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory, wire) -> Iterator[Any]:
    """The default offline arena: bundled corpus, offline baselines, votes on this machine."""
    # Imported here for start-up time: arena_server imports gradio (seconds), which only these fixtures need.
    from arena_server import running_arena

    with running_arena(tmp_path_factory.mktemp("data"), build=wire) as running:
        yield running


def open_page(where: Any, url: str, width: int = 1280, height: int = 900, *, ready: str | None = "#send",
              key: bool = False, **options: Any) -> Any:
    """A new page of ``where`` (a Browser or a BrowserContext) at ``width`` x ``height``, showing ``url``
    once ``ready`` (a selector; None: only the document) is there and, with ``key``, once the page-load script
    has stored the browser's key. ``options`` go to Browser.new_page (e.g. accept_downloads)."""
    page = where.new_page(**options)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url, wait_until="domcontentloaded")
    if ready is not None:
        page.locator(ready).wait_for(timeout=30_000)
    if key:
        page.wait_for_function(KEY_JS, timeout=10_000)
    return page


def open_leaderboard(where: Any, url: str, width: int = 1280, height: int = 900, *, shows: str = "Rank",
               **options: Any) -> Any:
    """A new page on the Leaderboard tab, once its table shows the text ``shows``."""
    page = open_page(where, url, width, height, ready=None, **options)
    page.get_by_role("tab", name="Leaderboard").click()
    page.wait_for_function(BOARD_SHOWS, arg=shows, timeout=30_000)
    return page


def ask(page: Any, question: str) -> None:
    """Type ``question`` and press Send."""
    page.locator("#question textarea").fill(question)
    page.locator("#send").click()


def battle(page: Any, question: str, timeout_ms: int = 60_000) -> None:
    """Ask ``question`` and wait until both answers are complete and the vote buttons open."""
    ask(page, question)
    page.wait_for_function(VOTES_OPEN, timeout=timeout_ms)


def records(arena: Any) -> list[dict]:
    """Every vote record the running arena has stored, oldest first."""
    return list(arena.services.arena.store.records())


def screenshot(target: Any, name: str, **options: Any) -> Path:
    """Save a screenshot of ``target`` (a page or a locator) as test-artifacts/``name``.png for a person to
    look at; ``options`` go to Playwright's screenshot (e.g. full_page=True)."""
    path = ARTIFACTS / f"{name}.png"
    target.screenshot(path=str(path), **options)
    return path
