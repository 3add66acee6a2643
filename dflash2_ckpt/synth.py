"""Old import path of the fixture writer (the README's example used `dflash2_ckpt.synth.materialise`); it is a
development aid and lives in dflash2_ckpt.dev.synth."""
from .dev.synth import materialise, read_tensor_list, write_config, write_safetensors, write_sharded

__all__ = ["materialise", "read_tensor_list", "write_config", "write_safetensors", "write_sharded"]
