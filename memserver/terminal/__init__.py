"""What every program's command line shares: error translation to one line and an exit
code, logging, the ``--config`` option and ``--watch`` intervals, JSON output, and the
ingest progress people see. Imports only ``memserver.errors``; the ``memserver`` CLI and
both agents' CLIs stand on it."""
