"""Figures a doc derives, recomputed from its own printed inputs and from safetensors headers: nothing is timed."""
