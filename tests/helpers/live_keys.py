"""Key sets of real SGLang responses, copied from ``tests/data/live-sglang-<release>/``.

``tests/unit/test_simserver_payloads.py::test_key_sets_match_the_live_files`` (0.5.19) and
``::test_0_5_23_key_sets_match_the_recorded_files`` re-read those files, so the copies cannot
drift; the simulated server's tests check its responses against them. The 0.5.23 sets are written
as what that release changed (``tests/data/live-sglang-0.5.23/README.md``).
"""

from __future__ import annotations

from pathlib import Path

LIVE = Path(__file__).resolve().parents[1] / "data" / "live-sglang-0.5.19"  # a live server's bodies
LIVE_0_5_23 = LIVE.with_name("live-sglang-0.5.23")
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

# SGLang 0.5.23 (recorded on the H200, CUDA graphs on): what changed against the sets above.
META_KEYS_0_5_23 = (META_KEYS_0_5_19 - SPEC_ALIASES) | {
    "storage_prefetch_wait", "storage_staging_wait", "first_token_latency",
}  # fmt: skip
MESSAGE_KEYS_0_5_23 = MESSAGE_KEYS - {"tool_calls"}
USAGE_KEYS_0_5_23 = USAGE_KEYS | {"completion_tokens_details"}
MODEL_INFO_KEYS_0_5_23 = MODEL_INFO_KEYS | {"disaggregation_mode"}
# avg_spec_accept_length is absent from the recording (three short requests, under one decode
# log interval), not from the release: the sign-off cells' result.json read it.
INTERNAL_STATE_EXTRA_KEYS_0_5_23 = (INTERNAL_STATE_EXTRA_KEYS - {"avg_spec_accept_length"}) | {
    "decode_cuda_graph_bs", "decode_cuda_graph_memory_gb",
}  # fmt: skip
# A streamed chat's chunks: content chunks carry no ``usage`` key in 0.5.23.
STREAM_CHUNK_KEYS_0_5_23 = {"id", "object", "created", "model", "choices"}
