from django.http import Http404
from django.shortcuts import render

from dashboard.web.docs_pages import doc_page


def doc(request, page="index"):
    found = doc_page(name=page)
    if found is None:
        raise Http404(f"no documentation page {page!r}")
    return render(request, "web/doc.html", {"doc": found})
