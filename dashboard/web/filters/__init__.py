"""The pages' template filters and tags, registered in one library (``format.register``) that the
templates load as ``ptbench`` (``web/templatetags/ptbench.py``): ``format`` for values, changes, build
refs and query strings, ``rows`` for the table rows built in Python."""
