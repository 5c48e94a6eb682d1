"""Sampling curves against the greedy path: fork maps, route hazards, temperature searches, the identity control."""
