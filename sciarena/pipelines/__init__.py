"""Multi-step contestants: a catalogue model wrapped in an inference loop (OpenScholar-style)."""
