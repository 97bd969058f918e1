"""What a first visit to a dashboard page weighs in headless Chromium (an empty cache: every response's
headers and encoded body, as they crossed the wire) (docs/benchmarks.md, "A first visit's weight").

    python -m bench.first_visit [URL]

URL defaults to the quick start's http://127.0.0.1:8000/. The README's screenshot is
scripts/screenshot.py's.
"""
from __future__ import annotations

import argparse

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1400, "height": 900}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default="http://127.0.0.1:8000/")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (only when run)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_context(viewport=VIEWPORT).new_page()
        finished = []
        page.on("requestfinished", lambda request: finished.append(request))
        page.goto(args.url, wait_until="networkidle")
        total = 0
        print(f"{'bytes':>10}  {'body':>10}  response")
        for request in finished:
            sizes = request.sizes()
            weight = sizes["responseHeadersSize"] + sizes["responseBodySize"]
            total += weight
            print(f"{weight:>10,}  {sizes['responseBodySize']:>10,}  {request.url}")
        print(f"{total:>10,}  first visit, {len(finished)} responses")
        browser.close()


if __name__ == "__main__":
    main()
