"""``python -m detection FILE`` and the package's independence from Django."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "detection"


def cli(path, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "detection", str(path)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_cli_replays_each_series_and_prints_alerts(tmp_path):
    rng = np.random.default_rng(3)
    drop = list(1.5 * np.exp(rng.normal(0, 0.01, 100)))
    drop[60:] = [v * 0.93 for v in drop[60:]]
    drop[20] = None
    flat = list(10 * np.exp(rng.normal(0, 0.01, 80)))
    doc = [
        {"id": "bert/static/speedup", "values": drop, "direction": "higher_is_better",
         "samples": [None] * len(drop)},
        {"id": 7, "values": flat, "direction": "lower_is_better", "noise_history": 0.01},
    ]
    f = tmp_path / "series.json"
    f.write_text(json.dumps(doc))
    out = cli(f)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert [r["id"] for r in res] == ["bert/static/speedup", 7]
    (alert,) = res[0]["alerts"]
    assert alert["first_bad"] == 60 and alert["raised_at"] in (61, 62) and alert["kind"] == "regression"
    assert alert["magnitude"] < -0.05 and 0.99 <= alert["confidence"] <= 1
    assert res[1]["alerts"] == []


def test_cli_names_the_bad_field_and_exits_2(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps([
        {"id": "a", "values": [1.0, 2.0], "direction": "higher_is_better"},
        {"id": "b", "values": [1.0, "x", -3, True], "direction": "up", "samples": [[1.0], None]},
        {"values": [1.0]},
    ]))
    out = cli(f)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert "series[1].values[1]: not a number (\"x\")" in lines
    assert "series[1].values[2]: -3 is not positive" in lines
    assert "series[1].values[3]: not a number (true)" in lines
    assert any(line.startswith("series[1].direction: 'up' is not one of") for line in lines)
    assert "series[1].samples: 2 entries for 4 values" in lines
    assert "series[2].id: missing" in lines and any(line.startswith("series[2].direction: missing") for line in lines)
    f.write_text("{not json")
    out = cli(f)
    assert out.returncode == 2 and "not JSON" in out.stderr
    f.write_text("{}")
    assert "top level: expected a JSON list" in cli(f).stderr
    assert cli(tmp_path / "missing.json").returncode == 2


def test_the_package_imports_without_django():
    """``detection`` is a top-level package: importing it loads nothing from Django, Celery or the
    dashboard (dashboard/__init__ starts the Celery app)."""
    code = (
        "import sys\n"
        "import detection as mod\n"
        "import detection.cli, detection.confirm, detection.deterministic\n"
        "assert mod.detect([1.0] * 20, direction='higher_is_better') == []\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'dashboard'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stdout + out.stderr
    for source in PACKAGE.glob("*.py"):
        text = source.read_text()
        assert "import django" not in text and "from django" not in text, source.name
