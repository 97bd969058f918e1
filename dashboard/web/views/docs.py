from django.http import FileResponse, Http404
from django.shortcuts import render

from dashboard.web.docs_pages import doc_image_path, doc_page


def doc(request, page="index"):
    found = doc_page(name=page)
    if found is None:
        raise Http404(f"no documentation page {page!r}")
    return render(request, "web/doc.html", {"doc": found})


def doc_image(request, name: str):
    """A screenshot a docs page shows (docs/img/<name>.png)."""
    path = doc_image_path(name=name)
    if path is None:
        raise Http404(f"no image {name!r} in docs/img")
    response = FileResponse(open(path, "rb"), content_type="image/png")  # noqa: SIM115 (FileResponse closes it)
    response["X-Content-Type-Options"] = "nosniff"
    return response
