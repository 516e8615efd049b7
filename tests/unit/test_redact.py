import pytest

from pipeline.results.redact import MASK, redact_argv, redact_env, redact_text


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--api-key", "s3cret", "--port", "1"], ["--api-key", MASK, "--port", "1"]),
        (["--api-key=s3cret"], ["--api-key=" + MASK]),
        (["--model-path", "m"], ["--model-path", "m"]),
    ],
)
def test_redact_argv(argv, expected):
    assert redact_argv(argv) == expected


def test_redact_env_masks_secret_names_only():
    env = {
        "HF_TOKEN": "hf_x",
        "OPENAI_API_KEY": "k",
        "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": "0.5",
        "DB_PASSWORD": "p",
        "PATH": "/bin",
    }
    out = redact_env(env)
    assert out["HF_TOKEN"] == out["OPENAI_API_KEY"] == out["DB_PASSWORD"] == MASK
    assert out["PATH"] == "/bin"
    assert out["SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"] == "0.5"


def test_redact_text():
    assert redact_text("key=abcd1234 again abcd1234", ["abcd1234"]) == f"key={MASK} again {MASK}"
