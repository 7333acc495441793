"""What the randomized kernel tests print when a case fails: a solution file and the ``tensile-asm verify``
command that reruns the case (shared by test_random_kernels and test_mfma_kernels)."""

from __future__ import annotations

import yaml


def reproducer(case: dict) -> str:
    """A solution file and a ``tensile-asm verify`` command for the case."""
    text = yaml.safe_dump({"ProblemType": case["problem"], **case["params"]}, default_flow_style=None)
    s = case["size"]
    return (f"cat > case.yaml <<'EOF'\n{text}EOF\ntensile-asm verify --arch {case['arch']} --solution case.yaml "
            f"--size {s.m},{s.n},{s.k},{s.batch} --alpha {case['alpha']} --beta {case['beta']} --seed {case['seed']}")
