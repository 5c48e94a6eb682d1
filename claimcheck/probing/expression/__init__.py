"""Ops written in a claim file as MLX expressions over declared arrays (the ``op_expr`` probe's params).

Parsing and checking (:func:`read`, :func:`problems`) import no MLX; :func:`arm_function` and
:func:`draw` take the ``mx`` and ``nn`` modules from the probe that runs them.
"""

from ._evaluate import arm_function, draw, evaluate
from ._spec import DTYPES, Arm, ArraySpec, ExprOp, problems, read
from ._syntax import (ARRAY_ATTRIBUTES, ARRAY_METHODS, FAST_FUNCTIONS, MX_CONSTANTS, MX_FUNCTIONS, NN_FUNCTIONS,
                      ExpressionError, Parsed, parse)

__all__ = ["ARRAY_ATTRIBUTES", "ARRAY_METHODS", "Arm", "ArraySpec", "DTYPES", "ExprOp", "ExpressionError",
           "FAST_FUNCTIONS", "MX_CONSTANTS", "MX_FUNCTIONS", "NN_FUNCTIONS", "Parsed", "arm_function", "draw",
           "evaluate", "parse", "problems", "read"]
