"""What a first visit to a dashboard page weighs in headless Chromium (an empty cache: every response's
headers and encoded body, as they crossed the wire), and optionally its screenshot at 1400 px, as the
README's is taken (docs/benchmarks.md, "A first visit's weight").

    python bench/first_visit.py [URL] [--screenshot docs/img/overview.png] [--colours 64]

URL defaults to the quick start's http://127.0.0.1:8000/. The README's screenshot: a database loaded
as scripts/quickstart.sh loads it (migrate, then its `manage.py ingest --imported ...` line), served
by `python manage.py runserver`; the PNG is reduced to 64 colours (~70 KB).
"""
from __future__ import annotations

import argparse

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1400, "height": 900}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default="http://127.0.0.1:8000/")
    parser.add_argument("--screenshot", help="write the page's first screen here (PNG)")
    parser.add_argument("--colours", type=int, default=64, help="colours of the screenshot's palette")
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
        if args.screenshot:
            page.screenshot(path=args.screenshot)
            shrink(args.screenshot, colours=args.colours)
        browser.close()


def shrink(path: str, *, colours: int) -> None:
    try:
        from PIL import Image  # noqa: PLC0415 (Pillow: in the development .venv, not a pinned requirement)
    except ImportError:
        print("Pillow not installed: the screenshot keeps all its colours (~230 KB)")
        return
    image = Image.open(path).convert("RGB")
    image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


if __name__ == "__main__":
    main()
