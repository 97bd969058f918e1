"""``manage.py crawl_pages``: every page reachable from ``/`` in this database, read in-process, and each
problem a person would meet: a 5xx, Django's DEBUG page, a broken link, a colour without a reason
(dashboard/web/crawl.py). Exits 1 when it finds one."""
from django.core.management.base import BaseCommand
from django.test import Client

from contract.arguments import non_negative
from dashboard.web.crawl import crawl, format_report


class Command(BaseCommand):
    help = "Crawl the site's pages from / and list 5xx answers, DEBUG pages, broken links and colours without a reason."

    def add_arguments(self, parser):
        parser.add_argument("--per-kind", type=non_negative(int), default=25, metavar="N",
                            help="at most N pages of each kind (/workloads/..., /explain/..., ...)")
        parser.add_argument("--limit", type=non_negative(int), default=400, metavar="N", help="at most N pages in all")
        parser.add_argument("--start", default="/", help="the first page (default /)")
        parser.add_argument("--shown", type=non_negative(int), default=40, metavar="N", help="list the first N problems")

    def handle(self, *args, per_kind, limit, start, shown, **options):
        client = Client(HTTP_HOST="127.0.0.1", raise_request_exception=False)

        def get(url):
            response = client.get(url)
            return response.status_code, response.get("Content-Type", ""), response.content.decode(errors="replace")

        report = crawl(get, start=start, per_kind=per_kind, limit=limit)
        self.stdout.write(format_report(report, shown=shown))
        if report.problems:
            raise SystemExit(1)
