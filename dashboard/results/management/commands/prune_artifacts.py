"""``manage.py prune_artifacts [--older-than-days N] [--max-total-bytes B]``: keep the artifact store
bounded (docs/artifacts.md). Uploads no result references are deleted once ARTIFACT_ORPHAN_HOURS
old, and first when room is made. Results keep their references; their pages then say the file was pruned."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from contract.arguments import non_negative
from dashboard.results.artifacts import artifact_prune


class Command(BaseCommand):
    help = "Delete stored artifacts older than N days, then the oldest until the rest fit in a total size."

    def add_arguments(self, parser):
        parser.add_argument("--older-than-days", type=non_negative(float), metavar="N",
                            help="delete artifacts stored more than N days ago")
        parser.add_argument("--max-total-bytes", type=non_negative(int), metavar="B",
                            help="then delete until the rest total at most B bytes: those no result references first, each oldest first")

    def handle(self, *args, older_than_days=None, max_total_bytes=None, **options):
        if older_than_days is None and max_total_bytes is None:
            raise CommandError("give --older-than-days, --max-total-bytes or both", returncode=2)  # a usage error
        outcome = artifact_prune(older_than_days=older_than_days, max_total_bytes=max_total_bytes,
                                 orphans_older_than_hours=settings.ARTIFACT_ORPHAN_HOURS)
        self.stdout.write(f"pruned {outcome.deleted} artifacts ({outcome.freed_bytes} bytes); "
                          f"kept {outcome.kept} ({outcome.kept_bytes} bytes)")
