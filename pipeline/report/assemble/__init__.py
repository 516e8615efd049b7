"""The report assembled: every cell loaded, judged and timed into one ``Report``, and its gate."""
