"""What the index holds and how it is written: a page's rows (chunks, aliases, timeline,
links), raw sources sentence by sentence, and ``reindex`` from the files. Imports ``graph``,
``db``, ``kb`` and ``clients``."""
