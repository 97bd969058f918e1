"""Screenshots of dashboard pages at 1400 px in headless Chromium, from the quick start's database: the
README's (docs/img/overview.png) and any page you change (DEVELOPERS.md: look at what a person sees).

    python scripts/screenshot.py                          # / -> docs/img/overview.png (the README's)
    python scripts/screenshot.py / /compare/ --out shots  # each page -> shots/<name>.png, first screen
    python scripts/screenshot.py /regressions/ --full     # the whole page, not its first screen

It serves ``--data-dir`` (default data/, what ./scripts/quickstart.sh made) with ``manage.py
runserver`` on a free loopback port, opens each page, waits until the network is idle, and stops the
server. A PNG for the README is reduced to 64 colours when Pillow is installed (~70 KB; ~230 KB
without).
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
README_SHOT = ROOT / "docs" / "img" / "overview.png"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(data_dir: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PTBENCH_DATA_DIR": str(data_dir), "DJANGO_LOG_LEVEL": "WARNING"}
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/", timeout=5)  # noqa: S310 (loopback)
            return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit("the dashboard did not answer within 60 s")


def shot_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "overview"


def shrink(path: Path, *, colours: int = 64) -> None:
    try:
        from PIL import Image  # noqa: PLC0415 (Pillow: optional, not a pinned requirement)
    except ImportError:
        print("Pillow not installed: the screenshot keeps all its colours")
        return
    image = Image.open(path).convert("RGB")
    image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", default=["/"], help="paths, e.g. / /compare/ (default /)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data", help="the database's folder (default data/)")
    parser.add_argument("--out", type=Path, help="a folder for <page>.png (default: / goes to docs/img/overview.png)")
    parser.add_argument("--full", action="store_true", help="the whole page, not its first 900 px")
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    if not (args.data_dir / "ptbench.sqlite3").is_file():
        raise SystemExit(f"no database in {args.data_dir}: run ./scripts/quickstart.sh first")
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (only when run)

    port = free_port()
    server = serve(args.data_dir, port)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_context(viewport={"width": args.width, "height": 900}).new_page()
            for path in args.pages:
                target = (args.out / f"{shot_name(path)}.png") if args.out else README_SHOT if path == "/" else None
                if target is None:
                    raise SystemExit(f"{path}: name a folder with --out")
                target.parent.mkdir(parents=True, exist_ok=True)
                response = page.goto(f"http://127.0.0.1:{port}{path}", wait_until="networkidle")
                page.screenshot(path=str(target), full_page=args.full)
                if target == README_SHOT:
                    shrink(target)
                print(f"{path} -> {target} (HTTP {response.status if response else '?'})")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
