"""What the Chromium tests share: where screenshots go and how Debian's Chromium is started."""

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


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (a playwright Browser) for the duration of the block."""
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
