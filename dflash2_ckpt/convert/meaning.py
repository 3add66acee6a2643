"""The meaning check of a conversion (engines/meaning.py) on the drafters convert plans and writes: the
source as opened, the output as planned (a dialect plan, a GGUF view) or as read back from the staging
directory. Every conversion goes through `check_drafters`; advice (compat) and the dry run use the same
drafters, so what is shown is what is checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..checkpoint import Checkpoint
from ..checkpoint.drafter import drafter_of
from ..checkpoint.layout import canonical_names
from ..engines import Drafter
from ..engines.meaning import MeaningCheck, check
from ..formats.gguf_names import gguf_to_hf
from ..formats.spec import DraftSpec
from .plan import ConversionPlan
from .quant import module_renames


def source_drafter(ckpt: Checkpoint, target: str | None = None) -> Drafter:
    """An opened checkpoint as the engines judge it: the source, or a written (staged) output opened again."""

    return drafter_of(ckpt, target=target)


def planned_drafter(plan: ConversionPlan, source: Drafter, out: str = "DRAFTER") -> Drafter:
    """The drafter a dialect plan writes: its config, its tensor names, the quantized modules renamed."""
    renames = module_renames((t.name, t.dst_name) for t in plan.tensors if t.dst_name)
    quant = {renames.get(m, m): s for m, s in source.quantized_modules.items()}
    return source.converted(
        plan.to,
        plan.new_spec,
        plan.config,
        (t.dst_name for t in plan.tensors if t.dst_name),
        quantized_modules=quant,
        path=out,
    )


def gguf_drafter(view: DraftSpec, tensors: Iterable[str], source: Drafter, out: str = "DRAFTER") -> Drafter:
    """The drafter a GGUF holds: its metadata read as llama.cpp reads it (`view`), its GGUF tensor names
    listed under their HF names, as an opened GGUF checkpoint lists them."""

    return source.converted(
        "gguf",
        view.with_(dialect="gguf"),
        {},
        (gguf_to_hf(t) or t for t in tensors),
        quantized_modules=source.quantized_modules,
        path=out,
    )


def check_drafters(source: Drafter, output: Drafter, accepted: Iterable[str] = ()) -> MeaningCheck:
    """Raises MeaningChangedError (a ConversionError, exit 1) on a change `accepted` does not name."""
    return check(source, output, accepted, drafter_names)


def drafter_names(d: Drafter) -> frozenset[str]:
    """The tensors the meaning check compares: the loaders' names (checkpoint/layout.py). A GGUF's reduced
    vocabulary is the same head and map under llama.cpp's names (convert/gguf_vocab.py), judged as the flat
    dialect's own head; t2d is left out everywhere, being d2t's inverse (llama.cpp's converter drops it and
    converting back rebuilds it exactly)."""
    spec, names = d.spec, set(d.tensors)
    if d.dialect == "gguf":
        from .gguf_vocab import HEAD_GGUF, HEAD_HF  # numpy comes with it: only a GGUF side pays

        names = {HEAD_HF if n == HEAD_GGUF else n for n in names}
        if spec is not None and spec.drafter_extra.get("draft_vocab_size"):
            spec = spec.with_(dialect="flat", version="v1")  # the one dialect whose roles know an own head
    return canonical_names(names - {"t2d"}, spec)
