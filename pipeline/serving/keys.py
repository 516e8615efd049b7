"""SGLang's two keys: where they come from, which endpoint takes which, what a refusal means.

``--api-key`` guards every endpoint but health; ``--admin-api-key``, when the server has one,
is the only key its admin-optional endpoints take (``/flush_cache``, which every eval window
calls). The values come from the environment variables the config names, never the config
itself (Hydra saves it), and are masked in every output.
"""

from __future__ import annotations

import dataclasses
import os

from evals.eval_conf import ClientConf
from pipeline.config.schema import RootConf


def with_api_key(conf: RootConf) -> RootConf:
    """The config with ``client.api_key`` / ``client.admin_api_key`` read from their variables.

    ``client.api_key_env`` names the variable of SGLang's ``--api-key`` (every endpoint but
    health), ``client.admin_api_key_env`` that of ``--admin-api-key`` (``/flush_cache``).

    Raises:
        ValueError: a key was written into the config itself (Hydra would save it in
            .hydra/config.yaml), or a named variable is unset.
    """
    client = conf.client
    api_key = _key_from_env(client.api_key, client.api_key_env, "api_key")
    admin_key = _key_from_env(client.admin_api_key, client.admin_api_key_env, "admin_api_key")
    if api_key is None and admin_key is None:
        return conf
    keyed = dataclasses.replace(client, api_key=api_key, admin_api_key=admin_key)
    return dataclasses.replace(conf, client=keyed)


def _key_from_env(written: str | None, env_name: str | None, field: str) -> str | None:
    if written and not env_name:
        raise ValueError(
            f"client.{field} is set in the config, which Hydra saves in .hydra/config.yaml: put "
            f"the key in an environment variable and set client.{field}_env=THAT_VARIABLE"
        )
    if not env_name:
        return None
    key = os.environ.get(env_name)
    if not key:
        raise ValueError(f"client.{field}_env={env_name} but that variable is unset")
    return key


def secrets_of(client: ClientConf) -> list[str]:
    """The key values to mask in every output file and message."""
    return [key for key in (client.api_key, client.admin_api_key) if key]


def auth_hint(status: int | None, method_path: str, client: ClientConf) -> str:
    """What to do about an HTTP 401/403 from ``method_path``; '' for any other status.

    SGLang's ``/flush_cache`` takes the admin key when the server has ``--admin-api-key``,
    every other endpoint but health takes ``--api-key``.
    """
    if status not in (401, 403):
        return ""
    admin = method_path.endswith("/flush_cache")
    flag = "--admin-api-key" if admin else "--api-key"
    env_field = "admin_api_key_env" if admin else "api_key_env"
    env_name = getattr(client, env_field)
    sent = env_name or (client.api_key_env if admin else None)
    if sent:
        return f"{method_path} refused the key from ${sent}: it must equal the server's {flag}" + (
            "" if env_name else f" (set client.{env_field} to the variable that holds it)"
        )
    return (
        f"{method_path} needs the server's {flag}: put that key in an environment variable "
        f"and set client.{env_field}=THAT_VARIABLE"
    )
