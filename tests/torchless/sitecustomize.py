"""First on PYTHONPATH, this folder makes an interpreter one that never installed model code:
importing torch, transformers, diffusers, timm or scipy fails as it does where they are absent. With
$TRIAGEBOT_IMPORTS set, the files of the modules imported after start-up are written there
when the interpreter exits, for the test to check against the dependencies it may use.

See tests/test_torch_free.py."""

import atexit
import os
import sys

MODEL_CODE = frozenset({"torch", "transformers", "diffusers", "timm", "scipy"})


class Absent:
    """A finder ahead of every other that refuses the model-code packages."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in MODEL_CODE:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Absent)

_AT_START = frozenset(sys.modules)


def _write_imports(path: str) -> None:
    modules = [module for name, module in list(sys.modules.items()) if name not in _AT_START]
    files = {getattr(module, "__file__", None) for module in modules} - {None}
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(sorted(files)) + "\n")


if os.environ.get("TRIAGEBOT_IMPORTS"):
    atexit.register(_write_imports, os.environ["TRIAGEBOT_IMPORTS"])
