"""Delete each s_waitcnt of a generated SGEMM kernel (gfx90a, WG16x16 = 4 waves, MT64x64x8) in turn and
verify the mutant on the strict emulator at 67x45x37; prints CAUGHT/MISSED per deletion and the rate.

    PYTHONPATH=. python3 bench/waitcnt_mutations.py

Recorded (this commit): 25/25 deletions detected, including both `s_waitcnt lgkmcnt(0)` before
`s_barrier` (reported as an LDS race: the write is still in flight after the barrier). With WG8x8 (one
wave per workgroup) those two deletions are harmless (a wave's LDS ops complete in order) and are
not reported; the other 23 are.
"""
import re, tempfile
from pathlib import Path
from tensile_asm.writer.context import Geometry
from tensile_asm.writer.kernel import write_kernel
from tensile_asm.isa.arch import load_arch
from tensile_asm.toolchain import assemble_and_link
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.runtime.emulated import EmulatedRuntime
arch = load_arch("gfx90a")
g = Geometry(wg0=16, wg1=16, tt0=4, tt1=4, depth_u=8, transpose_a=False, transpose_b=False, batched=True, use_beta=True)
k = write_kernel(g, arch, "mut")
lines = k.text().splitlines()
idx = [i for i, l in enumerate(lines) if l.strip().startswith("s_waitcnt")]
caught = 0
for i in idx:
    mutated = "\n".join(lines[:i] + lines[i + 1:])
    co = Path(tempfile.mkdtemp()) / "m.co"
    assemble_and_link(mutated, arch, co)
    r = verify_sizes(co, "mut", g, [Size(67, 45, 37)], 1.5, 0.5, 0, EmulatedRuntime())[0]
    ok = not r.passed
    caught += ok
    nxt = lines[i + 1].strip()[:30] if i + 1 < len(lines) else ""
    print("CAUGHT" if ok else "MISSED", lines[i].strip()[:40], "| next:", nxt, "|", r.detail[:110])
print(f"{caught}/{len(idx)} waitcnt deletions detected")
