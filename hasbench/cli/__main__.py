"""``python -m hasbench.cli``: the command line, as the ``hasbench`` entry point runs it."""

from hasbench.cli import main

raise SystemExit(main())
