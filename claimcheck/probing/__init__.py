"""The measuring side of the engine: the probe registry and the token-sampling science the probes share.

Only probes (and the libraries here that they call) import MLX, and only inside functions.
"""
