"""Read YAML into plain Python values while remembering the line of every field.

Claims are user input, so this reader is deliberately strict: it composes the
YAML node graph with PyYAML's safe machinery (no object construction at all),
refuses tags outside YAML's core schema (``!!python/...`` and friends), refuses
duplicate keys, and bounds nesting depth and alias expansion so a
"billion laughs" document fails fast instead of eating memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from claimcheck.errors import ClaimError

MAX_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_NODES = 20_000

_CORE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:timestamp",  # kept as its text: dates in notes stay strings
}

_SCALARS = yaml.SafeLoader("")  # only its scalar constructors are used
_COLLECTION_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with nesting capped in the scanner itself.

    The composer would reject deep documents anyway, but PyYAML's scanner does
    quadratic work on deeply nested flow collections before that point.
    """

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N802, N803 - PyYAML's names
        if self.flow_level >= MAX_DEPTH:
            raise yaml.scanner.ScannerError(None, None, f"nesting deeper than {MAX_DEPTH} levels", self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= MAX_DEPTH:
            raise yaml.scanner.ScannerError(None, None, f"nesting deeper than {MAX_DEPTH} levels", self.get_mark())
        return super().add_indent(column)


@dataclass
class LocatedDocument:
    """One YAML document as plain values plus ``field path -> line`` (1-based)."""

    value: Any
    lines: dict[str, int] = field(default_factory=dict)
    start_line: int = 1

    def line_of(self, path: str) -> int:
        """Line of ``path`` or of its closest located parent."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path.rpartition(".")[0] if "." in path else ""
        return self.start_line


class _Walker:
    def __init__(self, source: str) -> None:
        self.source = source
        self.nodes = 0
        self.lines: dict[str, int] = {}

    def fail(self, node: Node, path: str, message: str) -> ClaimError:
        return ClaimError(self.source, node.start_mark.line + 1, path, message)

    def walk(self, node: Node, path: str, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(node, path, f"document expands to more than {MAX_NODES} values (alias bomb?)")
        if depth > MAX_DEPTH:
            raise self.fail(node, path, f"nesting deeper than {MAX_DEPTH} levels")
        if node.tag not in _CORE_TAGS:
            raise self.fail(node, path, f"YAML tag `{node.tag}` is not allowed in claim files")
        if path:
            self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, ScalarNode):
            if node.tag in _COLLECTION_TAGS:
                raise self.fail(node, path, f"YAML tag `{node.tag}` does not fit a plain value")
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            return [self.walk(child, f"{path}[{i}]", depth + 1) for i, child in enumerate(node.value)]
        if isinstance(node, MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag not in _CORE_TAGS:
                    raise self.fail(key_node, path, "mapping keys must be plain scalars")
                key = str(self.scalar(key_node, path))
                child = f"{path}.{key}" if path else key
                if key == "<<":
                    raise self.fail(key_node, path, "YAML merge keys (`<<`) are not allowed in claim files")
                if key in result:
                    raise self.fail(key_node, child, "duplicate key (the earlier value would be silently overwritten)")
                self.lines[child] = key_node.start_mark.line + 1
                result[key] = self.walk(value_node, child, depth + 1)
            return result
        raise self.fail(node, path, f"unsupported YAML node {type(node).__name__}")  # pragma: no cover

    def scalar(self, node: ScalarNode, path: str) -> Any:
        if node.tag == "tag:yaml.org,2002:timestamp":
            return node.value
        try:
            value = _SCALARS.construct_object(node, deep=True)
        except yaml.MarkedYAMLError as error:
            raise self.fail(node, path, f"unreadable value: {error.problem}") from None
        except (yaml.YAMLError, ValueError, OverflowError, KeyError, TypeError) as error:
            raise self.fail(node, path, f"unreadable value `{node.value}` for tag `{node.tag}`") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(node, path, f"non-finite number `{node.value}` is not allowed")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63:
            raise self.fail(node, path, f"integer `{node.value}` is out of range")
        return value


def load_documents(text: str, source: str) -> Iterator[LocatedDocument]:
    """Yield each document of ``text`` with field lines; raise :class:`ClaimError` on bad YAML."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise ClaimError(source, 1, "", f"file is larger than {MAX_BYTES // 1024} KiB")
    try:
        for node in yaml.compose_all(text, Loader=_BoundedLoader):
            if node is None:
                continue
            walker = _Walker(source)
            value = walker.walk(node, "", 0)
            yield LocatedDocument(value=value, lines=walker.lines, start_line=node.start_mark.line + 1)
    except yaml.reader.ReaderError as error:
        line = text.count("\n", 0, error.position) + 1 if isinstance(error.position, int) else 1
        raise ClaimError(source, line, "", f"malformed YAML: unacceptable character #x{error.character:04x}"
                         if isinstance(error.character, int) else "malformed YAML: unreadable text") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        problem = error.problem or error.context or "malformed YAML"
        raise ClaimError(source, line, "", f"malformed YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise ClaimError(source, 1, "", f"malformed YAML: {error}") from None
    except RecursionError:
        raise ClaimError(source, 1, "", "malformed YAML: nesting too deep") from None
