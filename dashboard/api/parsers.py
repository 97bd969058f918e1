"""The API's JSON parser: a body nested past Python's recursion limit, or holding an integer past
its digit limit, is a 400 naming ``body``, not a 500."""
from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class JSONBodyParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deep") from None
