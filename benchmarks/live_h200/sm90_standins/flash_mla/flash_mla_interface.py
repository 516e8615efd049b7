"""Import-only stand-in: the names SGLang 0.5.23 imports from ``flash_mla.flash_mla_interface``."""


class FlashMLASchedMeta:
    """Placeholder for FlashMLA's scheduling metadata type (never built on the H200)."""


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(name)
    from flash_mla import _not_in_bundle

    return _not_in_bundle
