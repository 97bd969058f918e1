"""The LLMs of PyTorch's harness (and Llama-2 7B, the background reading's case) as data: the
transformers class that builds each, and its published architecture (docs/llms.md).

Each ``config`` holds the values of the model's ``config.json`` on the Hugging Face hub (``source``)
that fix its shapes and arithmetic, in transformers 5's spelling (``rope_parameters`` where 4.x read
``rope_theta`` / ``rope_scaling``); everything else is the config class's default. Nothing is read
from the hub: the model is ``<cls>(<cls>.config_class(**config))`` with random weights.
``tiny`` replaces the size fields for CI (2 layers, hidden 64) and keeps the structure: grouped KV
heads, a sliding window where the model has one (shrunk below the tiny cache so its path runs),
experts where it has them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class LlmFacts:
    cls: str  # the transformers class built: a causal LM (Whisper: its conditional-generation model)
    source: str  # where the config values were read
    config: Mapping[str, Any]
    tiny: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""  # how the build differs from the published model
    encoder_decoder: bool = False  # Whisper: audio encoder, text decoder
    # Parameters of the full build (a meta-device build counts them; a test keeps them): each was
    # checked against the size the model is published at when written down (docs/llms.md).
    parameters: int = 0


def _hub(model: str) -> str:
    return f"https://huggingface.co/{model}/blob/main/config.json"


# The tiny size, common to all: the arithmetic of each model at a size a 2-core CPU compiles in seconds.
_TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 512, "max_position_embeddings": 256}

LLMS: dict[str, LlmFacts] = {
    "meta-llama/Llama-3.2-1B": LlmFacts(
        parameters=1_235_814_400, cls="LlamaForCausalLM", source=_hub("meta-llama/Llama-3.2-1B"),
        config={"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256, "max_position_embeddings": 131072,
                "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "hidden_act": "silu",
                "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "high_freq_factor": 4.0,
                                    "low_freq_factor": 1.0, "original_max_position_embeddings": 8192}},
        tiny={**_TINY, "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "high_freq_factor": 4.0,
                                           "low_freq_factor": 1.0, "original_max_position_embeddings": 128}}),
    "google/gemma-2-2b": LlmFacts(
        parameters=2_614_341_888, cls="Gemma2ForCausalLM", source=_hub("google/gemma-2-2b"),
        config={"hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
                "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
                "rms_norm_eps": 1e-6, "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256,
                "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
        tiny={**_TINY, "query_pre_attn_scalar": 16, "sliding_window": 8}),
    "google/gemma-3-4b-it": LlmFacts(
        parameters=3_880_263_168, cls="Gemma3ForCausalLM", source=_hub("google/gemma-3-4b-it") + " (text_config)",
        config={"hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34, "num_attention_heads": 8,
                "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 262208, "max_position_embeddings": 131072,
                "rms_norm_eps": 1e-6, "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256,
                "sliding_window": 1024, "sliding_window_pattern": 6,
                "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                    "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}}},
        tiny={**_TINY, "query_pre_attn_scalar": 16, "sliding_window": 8, "sliding_window_pattern": 2},
        note="its text model (from the text_config); the SigLIP vision tower of the -it checkpoint is left out"),
    "openai/whisper-tiny": LlmFacts(
        parameters=37_760_640, cls="WhisperForConditionalGeneration", source=_hub("openai/whisper-tiny"), encoder_decoder=True,
        config={"d_model": 384, "encoder_layers": 4, "decoder_layers": 4, "encoder_attention_heads": 6,
                "decoder_attention_heads": 6, "encoder_ffn_dim": 1536, "decoder_ffn_dim": 1536, "vocab_size": 51865,
                "num_mel_bins": 80, "max_source_positions": 1500, "max_target_positions": 448},
        tiny={"d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
              "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "vocab_size": 512, "num_mel_bins": 16, "max_source_positions": 16,
              "max_target_positions": 64, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 3},
        note="prefill: the encoder over 30 s of log-mel features and the decoder over the prompt; decode: one decoder token"),
    "Qwen/Qwen3-0.6B": LlmFacts(
        parameters=596_049_920, cls="Qwen3ForCausalLM", source=_hub("Qwen/Qwen3-0.6B"),
        config={"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
                "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
                "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "hidden_act": "silu", "use_sliding_window": False,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
        tiny=_TINY),
    "mistralai/Mistral-7B-Instruct-v0.3": LlmFacts(
        parameters=7_248_023_552, cls="MistralForCausalLM", source=_hub("mistralai/Mistral-7B-Instruct-v0.3"),
        config={"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 32768, "max_position_embeddings": 32768,
                "rms_norm_eps": 1e-5, "hidden_act": "silu", "sliding_window": None,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
        tiny=_TINY),
    "openai/gpt-oss-20b": LlmFacts(
        parameters=20_914_757_184, cls="GptOssForCausalLM", source=_hub("openai/gpt-oss-20b"),
        config={"hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
                "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088, "max_position_embeddings": 131072,
                "rms_norm_eps": 1e-5, "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128,
                "attention_bias": True, "swiglu_limit": 7.0,
                "rope_parameters": {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0, "beta_fast": 32.0,
                                    "beta_slow": 1.0, "truncate": False, "original_max_position_embeddings": 4096}},
        tiny={**_TINY, "intermediate_size": 64, "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 8,
              "rope_parameters": {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0, "beta_fast": 32.0,
                                  "beta_slow": 1.0, "truncate": False, "original_max_position_embeddings": 8}},
        note="experts in bfloat16 (the published checkpoint stores them in MXFP4): 21 B parameters, about 42 GB"),
    "meta-llama/Llama-2-7b-hf": LlmFacts(
        parameters=6_738_415_616, cls="LlamaForCausalLM", source=_hub("meta-llama/Llama-2-7b-hf"),
        config={"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 32, "head_dim": 128, "vocab_size": 32000, "max_position_embeddings": 4096,
                "rms_norm_eps": 1e-5, "hidden_act": "silu", "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
        tiny=_TINY, note="not in the harness's list: the background reading's Llama-2 7B at batch 1 x 512"),
}
