"""The suite of PyTorch workloads that ptbench measures. Pure PyTorch; see ``workloads.base``."""
