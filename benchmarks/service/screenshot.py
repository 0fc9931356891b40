"""The README's picture of the web page (docs/images/web-page.png): the default index, a clinical note, one span opened.

    python benchmarks/service/screenshot.py        # needs Debian's Chromium (apt-get install chromium) and Playwright
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks.service.server import medlink_serve  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTE = (
    "62 y/o M with hx of MI and T2DM, presents with chest pain radiating to the left arm and shortness of breath. "
    "Denies fever or cough. No history of stroke. Possible pneumonia on the chest X-ray. Mother had breast cancer."
)


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    with medlink_serve("default") as (url, _seconds, _process), sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/lib/chromium/chromium", headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url)
        expect(page.locator("#index-info")).to_contain_text("concepts")
        page.fill("#input", NOTE)
        page.click("#run")
        expect(page.locator("#status")).to_contain_text("linked")
        page.locator("#result mark.span", has_text="chest pain").first.click()
        expect(page.locator("#record")).to_contain_text("Definition")
        out = ROOT / "docs" / "images" / "web-page.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
