"""Measurement protocol for timing probes, the fast-BLAS switch and the result cache.

Submodules are imported by name (``claimcheck.harness.blas``, ``claimcheck.harness.cache``, ...); this
package itself imports nothing so that loading it stays cheap and never pulls in MLX.
"""
