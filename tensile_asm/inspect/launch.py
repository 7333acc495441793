"""Decide how ``inspect`` can launch a kernel on the emulator to observe its LDS addresses.

Two kinds of kernel can be launched without the user's help: kernels without explicit arguments,
and GEMM kernels whose metadata arguments are Tensile's layout (``tensile_asm.gemm.arguments``), which get
a small representative problem: M = N = K = 256 (so any macro tile up to 256 and any DepthU up to
256 runs the unrolled loop at least once), every matrix 256 x 256 with leading dimension 256 (so
either transpose reads in bounds), one batch, one workgroup. Anything else is reported as not
launched, with the reason.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensile_asm.codeobject import KernelObject
from tensile_asm.gemm.arguments import argument_layout, argument_values
from tensile_asm.inspect.bank_conflicts import LaunchSpec
from tensile_asm.inspect.resources import workgroup_size
from tensile_asm.runtime.emulated import emulator_argument

GEMM_SIZE = 256


def _explicit_args(ko: KernelObject) -> list[dict]:
    return [a for a in (ko.metadata.get(".args") or [])
            if not str(a.get(".value_kind", "")).startswith("hidden_")]


def _tensile_layout(args: list[dict]):
    got = [(a.get(".name"), int(a.get(".size", 0)), int(a.get(".offset", -1))) for a in args]
    for batched, use_beta, stagger, wgm, ab, cd in itertools.product((True, False), repeat=6):
        layout = argument_layout(batched, use_beta, stagger_u=stagger, workgroup_mapping=wgm, initial_strides_ab=ab,
                                 initial_strides_cd=cd)   # first strides: 1 (argument_values' default)
        if got == [(a.name, a.size, a.offset) for a in layout]:
            return layout, batched
    return None, None


def _gemm_spec(layout, batched: bool, block: tuple) -> LaunchSpec:
    s = GEMM_SIZE
    rng = np.random.default_rng(0)
    arrays = {t: rng.uniform(-1, 1, s * s).astype(np.float32) for t in "ABCD"}
    values = argument_values(m=s, n=s, k=s, batch=1, ld={t: s for t in "ABCD"},
                             batch_stride={t: s * s for t in "ABCD"}, tensor2d_size={t: s * s for t in "AB"},
                             alpha=1.0, beta=0.5, macro_tile=(s, s), addresses=arrays)
    # One workgroup: whatever WorkGroupMapping the kernel was built with, its only block of
    # workgroups is a remainder block of one (Tensile kernels without a mapping ignore these).
    values.update(NumWorkGroups0=1, NumWorkGroups1=1, NumFullBlocks=0, WgmRemainder1=1,
                  MagicNumberWgmRemainder1=(1 << 31) + 1)
    args = [emulator_argument(arg.kind, values[arg.name]) for arg in layout]
    shape = f"M=N=K={s}{', batch 1' if batched else ''}"
    return LaunchSpec(block=block, args=tuple(args),
                      description=f"emulated first loop iteration of workgroup 0 of a GEMM ({shape})")


def launch_spec(ko: KernelObject) -> tuple[LaunchSpec | None, str]:
    """(spec, '') when ``inspect`` knows how to launch ``ko``, else (None, the reason)."""
    block = (workgroup_size(ko.metadata), 1, 1)
    args = _explicit_args(ko)
    if not args:
        return LaunchSpec(block=block, description="emulated first loop iteration of workgroup 0 "
                                                   "(the kernel takes no arguments)"), ""
    layout, batched = _tensile_layout(args)
    if layout is not None:
        return _gemm_spec(layout, batched, block), ""
    return None, (f"not computed: kernel '{ko.name}' takes {len(args)} arguments that are not Tensile's "
                  f"GEMM layout, so inspect has no launch arguments for the emulator")
