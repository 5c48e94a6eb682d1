"""Units shared by this project's probes (a leading underscore: a helper, not a probe module)."""

GIB = 1024**3
KIB = 1024
