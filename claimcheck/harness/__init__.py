"""Measurement protocol for timing probes and the fast-BLAS switch.

Submodules are imported by name (``claimcheck.harness.blas``, ``claimcheck.harness.timing``); this
package itself imports nothing so that loading it stays cheap and never pulls in MLX.
"""
