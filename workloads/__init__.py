"""The suite of PyTorch workloads that ptbench measures. Pure PyTorch; see ``workloads.base``.

Imports torch only, none of our other packages (.importlinter)."""
