"""The incremental decisions: when a known page is requested again (:mod:`.revisit`)."""
