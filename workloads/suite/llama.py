"""``llama_decode``: one decode step of a Llama-style LLM against a KV cache of dynamic length.

Why it is in the suite: token-by-token decoding is the dominant LLM inference cost and the case
torch.compile users care most about (gpt-fast, vLLM). Each step is memory-bound (weights and cache
are read once per token) and launch-heavy in eager, so fusion and CUDA graphs matter; the cache
length grows every step, so it is the natural dynamic dimension (backed vs unbacked).

``fn(input_ids [B, 1], k_cache, v_cache)`` with caches ``[layers, B, kv_heads, S, head_dim]`` holding
S past tokens; the step attends over the S cached positions plus the new one (the cache is extended
by concatenation, like transformers' DynamicCache) and returns the next-token logits [B, vocab].
Uses transformers' ``LlamaForCausalLM`` built from a ``LlamaConfig`` (random weights, offline), and
only it: where transformers cannot build it (or its cache API moved) the case fails (eager_error)
naming why, never another model under this name (``_common.library_model``). Results measured before
transformers was a runner requirement record ``workloads.suite.llama.LlamaDecoder``, our own Llama
then, as their implementation.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from workloads.base import DynamicDim, Instance, Workload
from workloads.registry import register
from workloads.suite._common import (
    freeze,
    input_generator,
    library_model,
    pick,
    randint,
    randn,
    tolerances,
    variant_value,
)


@dataclass(frozen=True)
class _Cfg:
    vocab: int
    dim: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    batch: int
    cache_len: tuple[int, int]  # past tokens in the cache: variant 0 (timed), variant 1

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads


_SIZES = {
    "tiny": _Cfg(vocab=128, dim=64, layers=2, heads=4, kv_heads=2, ffn=128, batch=2, cache_len=(16, 24)),
    # Half of a Llama-3-8B (hidden 4096, GQA 32/8, SwiGLU 14336), 16 layers, Llama-2 vocab; batch 8
    # decoding against 2048 cached tokens (~3.8B parameters).
    "full": _Cfg(vocab=32_000, dim=4096, layers=16, heads=32, kv_heads=8, ffn=14_336, batch=8, cache_len=(2048, 1536)),
}


def _hf_decoder(transformers, cfg: _Cfg, device, dtype):
    """transformers' LlamaForCausalLM from a config, wrapped to take the cache as two tensors."""
    config = transformers.LlamaConfig(
        vocab_size=cfg.vocab,
        hidden_size=cfg.dim,
        intermediate_size=cfg.ffn,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        num_key_value_heads=cfg.kv_heads,
        max_position_embeddings=4096,
        attn_implementation="sdpa",
    )
    model = freeze(transformers.LlamaForCausalLM(config).to(device=device, dtype=dtype))
    cache_cls = transformers.DynamicCache

    def decode_step(input_ids, k_cache, v_cache):
        cache = cache_cls(ddp_cache_data=list(zip(k_cache.unbind(0), v_cache.unbind(0))))
        out = model(input_ids=input_ids, past_key_values=cache, use_cache=True)
        return out.logits[:, -1, :]

    # Smoke test with a 2-token cache: an API change raises here, and the case fails naming it.
    kv = torch.zeros(cfg.layers, 1, cfg.kv_heads, 2, cfg.head_dim, device=device, dtype=dtype)
    logits = decode_step(torch.zeros(1, 1, dtype=torch.int64, device=device), kv, kv)
    if tuple(logits.shape) != (1, cfg.vocab):
        raise RuntimeError(f"unexpected logits shape {tuple(logits.shape)}")
    return model, decode_step


@register
class LlamaDecode(Workload):
    name = "llama_decode"
    category = "llm-decode"
    phase = "infer"
    description = (
        "One decode step of a Llama-style decoder (RMSNorm, RoPE, SwiGLU, grouped-query attention) "
        "for a batch of sequences against a KV cache of S past tokens; returns next-token logits. "
        "Tiny: 2 layers, hidden 64, S=16. Full: 16 layers of Llama-3-8B width (hidden 4096, 32/8 "
        "heads, FFN 14336), batch 8, S=2048. transformers' LlamaForCausalLM (random weights). Dynamic: "
        "the cache length S."
    )
    dynamic_dims = (DynamicDim("k_cache", 3, "sequence"), DynamicDim("v_cache", 3, "sequence"))
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        implementation, (model, fn) = library_model(
            "transformers", "transformers.LlamaForCausalLM",
            lambda transformers: _hf_decoder(transformers, cfg, device, dtype), device=device, seed=seed,
        )

        def make_inputs(variant: int):
            past = variant_value(cfg.cache_len, variant, "cache length")
            gen = input_generator(device, seed, variant)
            cache_shape = (cfg.layers, cfg.batch, cfg.kv_heads, past, cfg.head_dim)
            input_ids = randint(cfg.vocab, (cfg.batch, 1), gen, device)
            k_cache = randn(cache_shape, gen, device, dtype)
            v_cache = randn(cache_shape, gen, device, dtype)
            return input_ids, k_cache, v_cache

        # bfloat16 on an H100 (torch 2.11): SDPA picks cuDNN attention for the one-token query, which
        # is not run-to-run deterministic (eager vs eager: up to 0.08 on the logits); compiled vs
        # eager measured 0.26 at full size. float32 is bit-reproducible and within 4e-5.
        rtol, atol = tolerances(dtype, fp32=1e-3, bf16=0.3)
        return Instance(
            fn=fn,
            make_inputs=make_inputs,
            input_names=("input_ids", "k_cache", "v_cache"),
            rtol=rtol,
            atol=atol,
            modules=(model,),
            implementation=implementation,
        )
