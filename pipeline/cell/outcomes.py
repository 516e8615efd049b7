"""How a cell ends when it does not end well: the error kinds result.json records."""

from __future__ import annotations

import dataclasses
import errno
import traceback
from pathlib import Path

from backends.compat import Finding
from backends.startup_failure import classify_startup_log
from evals.datasets import DatasetError
from evals.eval_conf import ClientConf
from pipeline.results.cell_error import CellError
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_types import ResultError
from pipeline.results.resume import kept_note
from pipeline.serving import server_api
from pipeline.serving.keys import auth_hint
from pipeline.serving.server import ExternalServerError, ServerStartError


def record_failure(
    result: ResultDraft, err: BaseException, cell_dir: Path, client: ClientConf | None = None
) -> BaseException | None:
    """Put ``err`` on the result; return it when it is an interrupt to raise again.

    ``client`` names the key variables, so that a refused key is explained with them.
    """
    if isinstance(err, ServerStartError):
        failure = classify_startup_log(err.log_tail, err.exit_code, err.timed_out)
        fail(result, f"server_{failure.kind}", f"{failure.message}\n{err}", err.log_tail)
    elif isinstance(err, CellError):  # the cell's guards and measuring raise subclasses
        fail(result, err.kind, str(err), err.log_tail)
    elif isinstance(err, ExternalServerError):
        fail(result, "external_unreachable", str(err), "")
    elif isinstance(err, DatasetError):  # before any server starts: names file, row, field
        fail(result, "dataset", str(err), "")
    elif isinstance(err, server_api.ServerApiError):
        hint = auth_hint(err.status, err.path, client or ClientConf())
        fail(result, "server_api", f"{err}" + (f" ({hint})" if hint else ""), "")
    elif isinstance(err, KeyboardInterrupt | SystemExit):
        reason = getattr(err, "reason", f"the pipeline was interrupted ({type(err).__name__})")
        fail(result, "interrupted", f"{reason}; {kept_note(cell_dir)}", "")
        return err
    elif isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        message = f"cannot write {err.filename or cell_dir}: {err.strerror}; free space there "
        fail(result, "disk_full", message + "and rerun (answered samples are kept)", "")
    elif isinstance(err, Exception):
        fail(result, "internal_error", f"{type(err).__name__}: {err}", traceback.format_exc())
    else:
        return err  # GeneratorExit and the like: not ours to swallow
    return None


def unsupported(result: ResultDraft, blocking: list[Finding]) -> None:
    """Mark a cell the pre-flight refused, with SGLang's own messages."""
    message = " | ".join(f.text for f in blocking)  # a silent rule: its detail
    reasons = tuple(dataclasses.asdict(f) for f in blocking)
    result.set_error("unsupported", ResultError("unsupported", message, "", reasons))


def fail(result: ResultDraft, kind: str, message: str, log_tail: str) -> None:
    """Mark a cell failed with an error kind, a message and the server log's tail."""
    result.set_error("failed", ResultError(kind, message, log_tail))
