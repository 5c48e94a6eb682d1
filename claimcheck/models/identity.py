"""What identifies a model's weights on any machine, without loading the model (for an item's content key)."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.lru_cache(maxsize=None)
def weights_identity(model: str) -> str:
    """What identifies a model's weights here and on any other machine: a content hash where one is known.

    A weights file or directory the model resolves to is hashed (each file once per change, through the
    model cache's memo); a registered model with no file (a random-weight recipe) is its source line,
    which names the recipe. A model that does not resolve here is named as missing, so its items never
    carry a result measured on weights that were there.
    """
    from claimcheck.errors import ClaimcheckError, NotApplicable
    from claimcheck.models import _files
    from claimcheck.models._registry import resolve

    try:
        spec = resolve(model)
    except (NotApplicable, ClaimcheckError) as error:
        return f"missing: {' '.join(str(error).split())[:120]}"
    candidates = [spec.source, *spec.source.split()]
    for text in candidates:
        path = Path(text).expanduser()
        try:
            if path.is_file():
                return f"sha256:{_files.sha256_file_memo(path)}"
            if path.is_dir() and _files.weights_files(path):
                return f"sha256:{_files.weights_hash(path)}"
        except OSError:
            continue
    return f"{spec.key}: {spec.source}"
