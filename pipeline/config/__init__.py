"""The config: Hydra's schema for ``conf/`` and the rules a composed config must also obey."""
