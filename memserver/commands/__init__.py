"""Subcommands of the ``memserver`` CLI, one module per area (see ``memserver.cli``)."""
