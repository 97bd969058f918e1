"""The benchmark suite: importing this package registers every workload (see ``workloads.registry``).

One module per workload class that users recognise (docs/architecture.md, layers):

==========================  ==============================  =====================================
workload                    category                        module
==========================  ==============================  =====================================
resnet_train                vision-train                    ``resnet``
llama_decode                llm-decode                      ``llama``
bert_encoder                nlp-encoder-dynamic-padding     ``bert``
positional_graph_break      graph-break                     ``positional``
unet_diffusion              diffusion-control-flow          ``unet``
moe_routing                 moe-data-dependent              ``moe``
masked_attention            masked-attention                ``masked_attention``
transformer_train_step      whole-train-step                ``train_step``
mlp_loop                    overhead-bound                  ``mlp_loop``
==========================  ==============================  =====================================
"""
from workloads.suite import (  # noqa: F401  (imported for their @register side effect)
    bert,
    llama,
    masked_attention,
    mlp_loop,
    moe,
    positional,
    resnet,
    train_step,
    unet,
)

# Category of each workload class the suite must cover; tests check every one is registered.
REQUIRED_CATEGORIES = {
    "resnet_train": "vision-train",
    "llama_decode": "llm-decode",
    "bert_encoder": "nlp-encoder-dynamic-padding",
    "positional_graph_break": "graph-break",
    "unet_diffusion": "diffusion-control-flow",
    "moe_routing": "moe-data-dependent",
    "masked_attention": "masked-attention",
    "transformer_train_step": "whole-train-step",
    "mlp_loop": "overhead-bound",
}
