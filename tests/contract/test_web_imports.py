"""The web process never imports torch or the workloads: the dashboard's image has no torch (its
allowed runner imports, the build probe's executor, import neither)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
import django
django.setup()
import dashboard.urls
from dashboard.dispatch.services.planning import matrix_resolve, run_plan
planned = run_plan(size="tiny", matrix=matrix_resolve(size="tiny", machine_class="gpu-h100", default_timeout_s=900))
assert len(planned.plan.cases) > 100, len(planned.plan.cases)
assert "mlp_loop" in planned.descriptions
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "workloads"))
print(loaded)
sys.exit(1 if loaded else 0)
"""


def test_urlconf_and_planning_a_run_import_no_torch():
    done = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
