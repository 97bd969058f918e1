"""``manage.py export_run RUN_ID [--out FILE]``: a stored run as its run document (JSON)."""
import json
import uuid
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dashboard.results.export import run_document
from dashboard.results.models import Run


class Command(BaseCommand):
    help = "Write a stored run as a run document (to stdout, or --out FILE)."

    def add_arguments(self, parser):
        parser.add_argument("run_id")
        parser.add_argument("--out", type=Path)

    def handle(self, *args, run_id, out, **options):
        try:
            run = Run.objects.select_related("build", "machine").get(pk=uuid.UUID(run_id))
        except (ValueError, Run.DoesNotExist):
            raise CommandError(f"no run {run_id}") from None
        text = json.dumps(run_document(run=run), indent=1) + "\n"
        if out:
            out.write_text(text)
            self.stderr.write(f"run {run.id} written to {out}")
        else:
            self.stdout.write(text)
