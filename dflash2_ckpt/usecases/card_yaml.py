"""A model card's YAML front matter, read within bounds and written by the safe dumper.

The card comes from the publisher's folder or from the Hub (the target's card, for its license), so its
front matter is untrusted: a 368-byte README of nested aliases ("billion laughs") expands to gigabytes
once anything walks it, and a few thousand nested brackets overflow the parser's recursion. Here the
front matter is refused (CardYamlError, with the line) past MAX_FRONT_MATTER bytes, past MAX_DEPTH
levels, or when its aliases would expand to more than ALIAS_BUDGET nodes; a syntax error is the same
typed error. Only then does huggingface_hub's ModelCard (which calls yaml.safe_load) see the text.
The front matter push writes is emitted by yaml.safe_dump: a value with a newline, `---` or `<script>`
is quoted YAML, never a second block or markup.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_CARD_BYTES = 8 << 20  # a README.md read from disk or the Hub
MAX_FRONT_MATTER = 1 << 20  # its YAML block (real cards: a few KB, model-index results included)
MAX_DEPTH = 64  # nesting levels (model-index is about six deep)
ALIAS_BUDGET = 10_000  # nodes that aliases may repeat, all together
# huggingface_hub's own (repocard.REGEX_YAML_BLOCK): the block the Hub reads as metadata
BLOCK = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")


class CardYamlError(ValueError):
    """The front matter cannot be read safely; `line` (1-based, in the README) where known."""

    def __init__(self, why: str, line: int | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.line = line

    def __str__(self) -> str:
        return f"{self.why} (line {self.line})" if self.line else self.why


def _sizes(root: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes under `root`, a shared node counted each time it is reached (as an expansion would), in time
    linear in the distinct nodes (memoized, no recursion)."""
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in memo:
            continue
        kids: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            kids = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            kids = [n for pair in node.value for n in pair]
        if done or not kids:
            memo[id(node)] = 1 + sum(memo.get(id(k), 1) for k in kids)
            continue
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in memo)
    return memo[id(root)]


class _BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """SafeLoader whose composer counts nesting and what aliases repeat (the composer recurses per level)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._repeated = 0
        self._memo: dict[int, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None:
                self._repeated += _sizes(node, self._memo)
                if self._repeated > ALIAS_BUDGET:
                    raise CardYamlError(
                        f"its aliases repeat more than {ALIAS_BUDGET:,} nodes (an alias bomb?)",
                        event.start_mark.line + 1,
                    )
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise CardYamlError(
                    f"it nests deeper than {MAX_DEPTH} levels", self.peek_event().start_mark.line + 1
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str, first_line: int = 1) -> Any:
    """The YAML document in `text`, within the bounds above; CardYamlError otherwise (lines counted from
    `first_line`, the block's place in the README)."""
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_FRONT_MATTER:
        raise CardYamlError(f"the front matter is larger than {MAX_FRONT_MATTER:,} bytes")
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except CardYamlError as e:
        e.line = None if e.line is None else e.line + first_line - 1
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        why = " ".join(str(e.problem or e.context or "not YAML").split())
        raise CardYamlError(f"not YAML: {why}", None if mark is None else mark.line + first_line) from None
    except yaml.YAMLError as e:
        raise CardYamlError(f"not YAML: {' '.join(str(e).split())}") from None
    except RecursionError:
        raise CardYamlError(f"it nests deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def front_matter(card: str) -> dict[str, Any] | None:
    """The card's metadata (None: the card has no front matter block); CardYamlError when it cannot be read
    or is not a mapping."""
    if len(card) > MAX_CARD_BYTES:
        raise CardYamlError(f"README.md is larger than {MAX_CARD_BYTES:,} bytes")
    m = BLOCK.search(card)
    if m is None:
        return None
    data = load(m.group(2), first_line=m.group(1).count("\n") + 1)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CardYamlError(f"the front matter is a {type(data).__name__}, not a mapping of keys", 2)
    return data


def dump(metadata: dict[str, Any]) -> str:
    """Front matter text (without the `---` lines) by the safe dumper, keys in the order given."""
    return str(yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True)).strip()
