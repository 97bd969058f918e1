"""``python manage.py ingest FILE...``: store run documents; exit non-zero naming the bad field."""
from json import dumps
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.results.artifacts import artifact_delete, artifacts_store_beside
from dashboard.results.models import Artifact
from contract.document import InvalidDocument


class Command(BaseCommand):
    help = "Store run documents (JSON files written by `python -m runner run --out FILE`). Each file is all or nothing."

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument("--json", action="store_true", help="one JSON line per stored document (for python -m runner)")
        parser.add_argument("--imported", action="store_true",
                            help="sample data measured elsewhere: its own build, labelled 'imported (host, day)' on every page")

    def handle(self, *args, files: list[Path], json: bool = False, imported: bool = False, **options) -> None:
        failed = stored = 0
        for path in files:
            stored_files: list[str] = []
            try:
                raw = path.read_bytes()
                # The files the document references beside it (python -m runner run --out), first.
                stored_files = artifacts_store_beside(document=raw, directory=path.parent)
                outcome = run_ingest_and_detect(document=raw, imported=imported)
            except OSError as exc:
                failed += 1
                self.stderr.write(f"{path}: cannot read: {exc.strerror}")
                continue
            except InvalidDocument as exc:
                artifact_delete(artifacts=Artifact.objects.filter(pk__in=stored_files))  # all or nothing
                failed += 1
                for error in exc.errors:
                    self.stderr.write(f"{path}: {error}")
                continue
            stored += outcome.results_created
            if json:
                self.stdout.write(dumps({"path": str(path), "run_id": str(outcome.run_id), "created": outcome.created,
                                         "results_created": outcome.results_created, "results_skipped": outcome.results_skipped}))
                continue
            if options["verbosity"] < 1:
                continue
            verb = "stored" if outcome.created else "already stored" if not outcome.results_created else "added to"
            self.stdout.write(
                f"{path}: {verb} run {outcome.run_id} "
                f"({outcome.results_created} results new, {outcome.results_skipped} already present)"
            )
        if options["verbosity"] < 1 and not json:
            self.stdout.write(f"{'imported sample data' if imported else 'ingested'}: {len(files) - failed} documents, "
                              f"{stored} results new")
        if failed:
            raise CommandError(f"{failed} of {len(files)} documents were not stored")
