"""Headless Chromium driven by selenium, for the explorer's browser test and benchmark."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# No network, no first-run or background traffic, a fresh profile each time.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)


def browser_paths() -> tuple[str, str] | None:
    """(chromium, chromedriver), or None where either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@contextmanager
def chromium() -> Iterator[Any]:
    """A selenium WebDriver for headless Chromium that keeps the browser console log."""
    from selenium import webdriver

    paths = browser_paths()
    if paths is None:
        raise RuntimeError("chromium and chromedriver are not installed")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = paths[0]
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(
            options=options, service=webdriver.ChromeService(executable_path=paths[1])
        )
        try:
            yield driver
        finally:
            driver.quit()


def open_page(driver: Any, page: Path, timeout: float = 60.0) -> None:
    """Load a file:// page and wait until the explorer says it is ready."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'")
    )


def console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def wait_until(driver: Any, script: str, *args: Any, timeout: float = 30.0) -> Any:
    """Wait until a script (an expression returning a truthy value) holds; return its value."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script, *args))


def wait_for_text(driver: Any, element_id: str, text: str, timeout: float = 30.0) -> str:
    """Wait until the element's text contains `text` (the page renders details asynchronously)."""
    return wait_until(
        driver,
        "const e = document.getElementById(arguments[0]);"
        "return e && e.innerText.includes(arguments[1]) ? e.innerText : false;",
        element_id,
        text,
        timeout=timeout,
    )
