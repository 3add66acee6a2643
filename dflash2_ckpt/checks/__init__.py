"""Every finding family, one module per family; verify runs them in the order of `suite.FAMILIES`.

A family is a module with `EMITS: frozenset[str]` (the codes it writes, claimed by no other module)
and `check(ctx: CheckContext) -> list[Finding]`, which decides itself whether it applies (the tensor
family only to DFlash drafters with tensors, pairing only with a target, content only with --scan).

To add a family (engine rules, quantization, GGUF, ...): write `checks/<family>.py` with EMITS and
check(), then add one line `("<family>", <family>.check)` to FAMILIES in checks/suite.py. Register
its codes in codes.py; tests/checks/test_registry.py then checks that the module claims them and
that some test produces each one.

The families judge a checkpoint that checkpoint/ has opened completely; nothing below this layer
imports them (tests/test_layers.py).
"""
