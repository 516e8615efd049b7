"""Write a tiny random-weight Llama with its own BPE tokenizer, for live SGLang runs with no hub.

Run it on the GPU host with that machine's own torch and transformers, BEFORE the SGLang bundle
goes on PYTHONPATH (setup_on_gpu.sh does):

    python3 -m benchmarks.live_h200.make_tiny_model /tmp/tiny-llama

The model is the first live SGLang cell's: 2 layers, hidden 1024, 8 query heads, 2 KV heads,
head dim 128, bf16, random weights from a fixed seed. The tokenizer is a byte-level BPE trained on
the fly with ``tokenizers`` on a corpus built into this file, padded with filler tokens to exactly
the model's vocabulary (so every id the random model emits decodes), plus a minimal chat template.
The same seed gives the same weights and tokenizer. A folder that already holds this recipe is
left alone unless ``--force``; anything else already there is an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# The byte-level synth model's special tokens and chat template (one definition for both models).
from benchmarks.live_h200.synth_train import (
    BOS,
    CHAT_TEMPLATE,
    EOS,
    EOT,
    HEADER_END,
    HEADER_START,
    PAD,
)

RECIPE_FILE = "mtp_eval_recipe.json"

SPECIAL = [BOS, EOS, PAD, HEADER_START, HEADER_END, EOT]

SENTENCES = (
    "Answer the following multiple choice question. The last line of your response should be "
    "of the form 'Answer: LETTER' where LETTER is one of ABCD. "
    "Think step by step before answering.",
    "A particle of mass m moves in a potential well; what is the energy of its ground state?",
    "Which of the following compounds is the strongest acid in aqueous solution at 25 degrees?",
    "The enzyme binds its substrate, lowers the activation energy and speeds up the reaction.",
    "Two photons collide and produce an electron and a positron with equal and opposite momenta.",
    "The quick brown fox jumps over the lazy dog while the speculative decoder drafts tokens.",
    "Accept length counts the tokens committed per verify step, the bonus token included.",
    "Prefill reads the whole prompt; decode writes one token at a time from the key value cache.",
)


def corpus(seed: int) -> list[str]:
    """Deterministic training text: fixed sentences, shuffled word mixes, numbers and symbols."""
    import random

    rng = random.Random(seed)
    words = " ".join(SENTENCES).replace(".", " .").replace(",", " ,").split()
    mixes = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(2000)]
    numbers = [
        " ".join(str(rng.randrange(10 ** rng.randrange(1, 6))) for _ in range(8))
        for _ in range(1000)
    ]
    symbols = ["(A) (B) (C) (D) Answer: A Answer: B Answer: C Answer: D = + - * / ^ { } [ ] < >"]
    return [*SENTENCES, *mixes, *numbers, *symbols] * 2


def train_tokenizer(vocab_size: int, seed: int) -> Any:
    """A byte-level BPE of exactly ``vocab_size`` tokens (filler tokens pad a short training)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus(seed), trainer=trainer)
    missing = vocab_size - tok.get_vocab_size()
    if missing < 0:
        raise RuntimeError(f"tokenizer has {tok.get_vocab_size()} tokens, over {vocab_size}")
    tok.add_special_tokens([f"<|filler_{i}|>" for i in range(missing)])
    return tok


def build_model(vocab_size: int, seed: int, tok_ids: dict[str, int]) -> Any:
    """The 2-layer bf16 Llama with random weights drawn from ``seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=2,
        head_dim=128,
        max_position_embeddings=8192,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=tok_ids[BOS],
        eos_token_id=tok_ids[EOS],
        pad_token_id=tok_ids[PAD],
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    model.config.dtype = torch.bfloat16  # recorded as "bfloat16" in config.json
    return model


def write(out: Path, vocab_size: int, seed: int) -> None:
    """Train the tokenizer, build the model and save both into ``out``."""
    from transformers import PreTrainedTokenizerFast

    tok = train_tokenizer(vocab_size, seed)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        chat_template=CHAT_TEMPLATE,
        model_max_length=8192,
    )
    model = build_model(vocab_size, seed, {t: tok.token_to_id(t) for t in SPECIAL})
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(out)
    model.save_pretrained(out)
    model.generation_config.save_pretrained(out)


def check(out: Path) -> dict[str, Any]:
    """Reload the folder and run one forward pass on CPU: what SGLang needs must load."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(out)
    msgs = [{"role": "user", "content": "What is 2 + 2? Answer: A"}]
    ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_dict=False)
    if not isinstance(ids, list):  # some versions return a BatchEncoding-like mapping
        ids = list(ids["input_ids"])
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.bfloat16)
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits
    every = tok.decode(list(range(len(tok))))  # every id decodes (no KeyError, no None)
    return {
        "tokens": len(tok),
        "prompt_ids": len(ids),
        "logits": list(logits.shape),
        "params": sum(p.numel() for p in model.parameters()),
        "decoded_chars": len(every),
        "prompt": tok.decode(ids),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write, e.g. /tmp/tiny-llama")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--force", action="store_true", help="rewrite an existing model folder")
    args = parser.parse_args(argv)
    recipe = {
        "kind": "tiny-random-llama",
        "version": 1,
        "seed": args.seed,
        "vocab_size": args.vocab_size,
    }
    stamp = args.out / RECIPE_FILE
    if stamp.exists() and not args.force and json.loads(stamp.read_text()) == recipe:
        print(f"make_tiny_model: {args.out} already holds this model (--force rewrites it)")
        return 0
    if args.out.exists() and any(args.out.iterdir()) and not stamp.exists() and not args.force:
        print(
            f"make_tiny_model: {args.out} is not empty and holds no {RECIPE_FILE}: "
            "choose an empty folder or pass --force",
            file=sys.stderr,
        )
        return 2
    write(args.out, args.vocab_size, args.seed)
    summary = check(args.out)
    stamp.write_text(json.dumps(recipe) + "\n")
    print(f"make_tiny_model: wrote {args.out}: {json.dumps(summary)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
