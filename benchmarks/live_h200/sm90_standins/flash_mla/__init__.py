"""Import-only stand-in for FlashMLA (`sgl-flash-mla`, import `flash_mla`) in the H200 bundle.

SGLang 0.5.23's EAGLE v2 worker imports ``FlashMLABackend`` when it captures CUDA graphs, only to
check whether the draft backend is one (``eagle_worker_v2._capture_cuda_graphs``), and that module
imports ``flash_mla`` at the top. FlashMLA is the MLA decode kernel (DeepSeek-style models); the
Llama-shaped models served live never run it, and the real wheel is built against a newer torch
than the H200's. Every name resolves, so the import succeeds; any call raises.
"""


def _not_in_bundle(*args: object, **kwargs: object) -> None:
    raise NotImplementedError("FlashMLA is not in the H200 bundle (import-only stand-in)")


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(name)
    return _not_in_bundle
