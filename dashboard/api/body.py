"""Request bodies sent chunked (``Transfer-Encoding: chunked``, no ``Content-Length``; #19 item 8).

Django reads a body only as far as ``Content-Length`` says, so a chunked body reads as empty even
where the server has already de-chunked it. gunicorn de-chunks and marks its input as ending at the
body's end (``wsgi.input_terminated``): the body is read to its end here, up to the size limit. A
server that does not (``runserver``, ``wsgiref``) is answered 411 naming the problem: a chunked
body is never taken for an empty document.
"""
from __future__ import annotations

import io

from dashboard.api.exceptions import FieldError, PayloadTooLarge

READ_BYTES = 64 * 1024


def is_chunked(meta) -> bool:
    return "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower() and not meta.get("CONTENT_LENGTH")


def chunked_body_read(request, *, limit: int) -> None:
    """Where ``request`` (Django's) carries a chunked body, read it (413 past ``limit`` bytes) and
    set it as the body with its ``Content-Length``; 411 where the server cannot tell where it ends."""
    meta = request.META
    if not is_chunked(meta):
        return
    if not meta.get("wsgi.input_terminated"):
        raise FieldError("Transfer-Encoding", "a chunked body cannot be read by this server: send it with a "
                         "Content-Length", 411)
    parts, size = [], 0
    while chunk := meta["wsgi.input"].read(READ_BYTES):
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the chunked body is over {limit} bytes; the limit is {limit} bytes")
    body = b"".join(parts)
    meta["CONTENT_LENGTH"] = str(len(body))
    request._body, request._stream = body, io.BytesIO(body)
    request._read_started = False
