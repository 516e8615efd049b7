"""Key sets of real SGLang 0.5.19 responses, copied from ``tests/data/live-sglang-0.5.19/``.

``tests/unit/test_simserver_payloads.py::test_key_sets_match_the_live_files`` re-reads those
files, so the copies cannot drift; the simulated server's tests check its responses against them.
"""

from __future__ import annotations

from pathlib import Path

LIVE = Path(__file__).resolve().parents[1] / "data" / "live-sglang-0.5.19"  # a live server's bodies
CHAT_KEYS = {"id", "object", "created", "model", "choices", "usage", "metadata", "sglext"}
CHOICE_KEYS = {"index", "message", "logprobs", "finish_reason", "matched_stop", "meta_info"}
MESSAGE_KEYS = {"role", "content", "reasoning_content", "tool_calls"}
USAGE_KEYS = {
    "prompt_tokens", "total_tokens", "completion_tokens", "prompt_tokens_details",
    "reasoning_tokens",
}  # fmt: skip
SPEC_ALIASES = {"spec_accepted_drafts", "spec_proposed_drafts", "spec_accept_histogram"}
META_KEYS_0_5_19 = {
    "id", "finish_reason", "prompt_tokens", "weight_version", "num_retractions",
    "forward_entry_time", "prefill_finished_time", "queue_time", "reasoning_tokens",
    "completion_tokens", "cached_tokens", "weight_versions", "cached_tokens_details", "dp_rank",
    "e2e_latency", "spec_accept_rate", "spec_accept_length", "spec_num_correct_drafts",
    "spec_num_proposed_drafts", "spec_verify_ct", "spec_correct_drafts_histogram",
    "request_received_ts", "api_server_dispatch_finish_ts", "request_finished_ts",
    "decode_throughput", "response_sent_to_client_ts", *SPEC_ALIASES,
}  # fmt: skip
SPEC_DETAILS_KEYS = {
    "spec_accept_rate", "spec_accept_length", "spec_cap_length", "spec_block_accept_length",
    "spec_num_correct_drafts", "spec_num_proposed_drafts", "spec_verify_ct",
    "spec_correct_drafts_histogram", "spec_cap_lens_histogram",
}  # fmt: skip
GENERATE_KEYS = {"text", "output_ids", "meta_info"}
MODEL_CARD_KEYS = {"id", "object", "created", "owned_by", "root", "parent", "max_model_len"}
MODEL_INFO_KEYS = {
    "model_path", "served_model_name", "tokenizer_path", "is_generation",
    "preferred_sampling_params", "weight_version", "load_format", "reasoning_parser",
    "tool_call_parser", "has_image_understanding", "has_audio_understanding", "model_type",
    "architectures", "embedding",
}  # fmt: skip
INTERNAL_STATE_EXTRA_KEYS = {
    "world_size", "last_gen_throughput", "memory_usage", "startup_time",
    "effective_max_running_requests_per_dp", "avg_spec_accept_length", "env_vars",
}  # fmt: skip
FLUSH_BODY = (
    "Cache flushed.\nPlease check backend logs for more details. (When there are running or "
    "waiting requests, the operation will not be performed.)\n"
)
