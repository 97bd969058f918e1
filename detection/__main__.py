"""``python -m detection FILE``: see ``cli.py``."""
from .cli import main

raise SystemExit(main())
