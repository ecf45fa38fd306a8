"""Dates in text: the question's date window and order ("last week", "since March",
"өнгөрсөн долоо хоногт", English and Mongolian), the dates a sentence mentions, and an
explicit ``now``. Pure functions: imports only ``memserver.errors``; search, the index,
the store and both agents read dates with it, so they read them alike."""
