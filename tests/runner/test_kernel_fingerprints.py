"""Kernel fingerprints (runner.engine.kernel_profile, issue #30): the same code under another
generated name or cache directory has the same fingerprint; other code has another."""
from __future__ import annotations

from runner.engine.kernel_profile import kernels_in

WRAPPER = """
triton_poi_fused_add_0 = async_compile.triton('triton_poi_fused_add_0', '''
import triton
@triton_heuristics.pointwise(filename=__file__, inductor_meta={'kernel_name': 'triton_poi_fused_add_0', 'backend_hash': 'f3b1c2d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2'})
@triton.jit
def triton_poi_fused_add_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    tmp0 = tl.load(in_ptr0 + x0)
    tl.store(out_ptr0 + x0, tmp0 + 1.0)
''', device_str='cuda')

cpp_fused_mul_1 = async_compile.cpp_pybinding(['float*'], r'''
#include "/tmp/torchinductor_me/pb/cpbabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefab.h"
extern "C" void kernel(float* in_out_ptr0) { in_out_ptr0[0] *= 2; }
''')

async_compile.wait(globals())
"""


def test_generated_names_hashes_and_cache_paths_do_not_change_a_fingerprint():
    first, second = kernels_in(WRAPPER)
    assert (first["name"], first["kind"]) == ("triton_poi_fused_add_0", "triton")
    assert (second["name"], second["kind"]) == ("cpp_fused_mul_1", "cpp_pybinding")
    assert "triton_poi_fused_add_0" not in first["source"] and "def KERNEL(" in first["source"]
    assert "CACHE_PATH" in second["source"] and "torchinductor_me" not in second["source"]
    renamed = (WRAPPER.replace("triton_poi_fused_add_0", "triton_poi_fused_add_7").replace("f3b1c2d4", "0000aaaa")
               .replace("torchinductor_me/pb/cpbabc", "torchinductor_you/xy/cxyabc"))
    assert [k["fingerprint"] for k in kernels_in(renamed)] == [first["fingerprint"], second["fingerprint"]]
    changed = WRAPPER.replace("tmp0 + 1.0", "tmp0 + 2.0")
    assert kernels_in(changed)[0]["fingerprint"] != first["fingerprint"]
    assert kernels_in(changed)[1]["fingerprint"] == second["fingerprint"]
