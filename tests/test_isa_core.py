"""Typed instructions, the opcode table, register allocation and constant division."""

import numpy as np
import pytest

from tensile_asm.errors import UserError
from tensile_asm.isa.allocation import allocate
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.instruction import inst, waitcnt
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.opcodes import op_info
from tensile_asm.isa.registers import VCC, Imm, Label, Reg, VReg
from tensile_asm.writer.divide import magic_for


def test_render_and_defs_uses():
    i = inst("buffer_load_dword", Reg("v", 4), Reg("v", 2), Reg("s", 8, 4), 0, mods=["offen", ("offset", 16)])
    assert i.render() == "buffer_load_dword v4, v2, s[8:11], 0 offen offset:16"
    assert i.defs == (Reg("v", 4),) and Reg("s", 8, 4) in i.uses
    assert i.info.counter == "vm"
    add = inst("v_add_co_u32", Reg("v", 1), VCC, Reg("v", 2), 70)
    assert add.info.num_defs == 2 and add.render() == "v_add_co_u32 v1, vcc, v2, 0x46"
    assert waitcnt(vmcnt=0, lgkmcnt=3).render() == "s_waitcnt vmcnt(0) lgkmcnt(3)"
    assert str(Imm(1.0)) == "1.0" and str(Imm(1.5)) == "0x3fc00000" and str(Imm(-16)) == "-16"


def test_opcode_families():
    assert op_info("s_add_u32").implicit_defs == ("scc",)
    assert op_info("s_cbranch_scc1").implicit_uses == ("scc",)
    assert op_info("s_load_dwordx4").counter == "smem"
    assert op_info("ds_read_b128").counter == "lgkm" and op_info("ds_write_b32").num_defs == 0
    assert op_info("v_cmp_lt_u32_e64").family == "VOPC"
    assert op_info("buffer_atomic_add_f32").num_defs == 0
    assert op_info("buffer_atomic_add_f32", returns=True).num_defs == 1
    assert op_info("v_add_co_u32_dpp").num_defs == 2 and op_info("v_swap_b32").num_defs == 2
    from tensile_asm.isa.parser import parse_instruction
    dma = parse_instruction("buffer_load_dword v1, s[8:11], s12 offen lds")     # LDS DMA: v1 is an address
    assert dma.defs == () and dma.uses[0].index == 1
    assert parse_instruction("global_load_lds_dword v2, s[4:5]").defs == ()
    assert parse_instruction("buffer_load_dword v1, s[8:11], s12 offen").defs[0].index == 1
    with pytest.raises(KeyError):
        op_info("not_an_opcode")
    with pytest.raises(KeyError):
        inst("bogus_op", Reg("v", 0))


def _alloc(module, v=16, s=16):
    return allocate(module, {"v": v, "s": s, "a": 0})


def test_allocation_reuses_dead_registers_and_respects_alignment():
    a, b, c = VReg("v", 1, "a"), VReg("v", 1, "b"), VReg("v", 2, "c", align=2)
    m = Module("t").add(inst("v_mov_b32", a, 1), inst("v_mov_b32", b, a),       # a dies here
                        inst("v_mov_b32", c[0], b), inst("v_mov_b32", c[1], b))  # c may reuse a's register
    alloc = _alloc(m)
    assert alloc.assignment[c] % 2 == 0
    assert alloc.assignment[a] != alloc.assignment[b]
    assert alloc.next_free["v"] <= 4


def test_allocation_keeps_loop_carried_values_alive():
    acc, tmp, later = VReg("v", 1, "acc"), VReg("v", 1, "tmp"), VReg("v", 1, "later")
    loop = Label(".Lloop")
    m = Module("t").add(
        inst("v_mov_b32", acc, 0),
        LabelDef(loop.name),
        inst("v_mov_b32", tmp, 2),               # born and dead inside the loop
        inst("v_add_f32", acc, acc, tmp),        # acc carried between iterations
        inst("s_cbranch_scc1", loop),
        inst("v_mov_b32", later, 3),
        inst("v_add_f32", later, later, acc))
    alloc = _alloc(m)
    assert alloc.assignment[tmp] != alloc.assignment[acc]
    # A value first written after the loop may reuse tmp's register but never acc's.
    assert alloc.assignment[later] != alloc.assignment[acc]


def test_allocation_fixed_registers_and_overflow():
    serial = VReg("v", 1, "Serial", fixed=0)
    x = VReg("v", 1, "x")
    m = Module("t").add(inst("v_mov_b32", x, 1), inst("v_add_u32", x, x, serial))
    assert _alloc(m).assignment[x] != 0     # v0 holds the work-item id from the start
    regs = [VReg("v", 1, f"r{i}") for i in range(5)]
    m2 = Module("t").add(*[inst("v_mov_b32", r, 1) for r in regs], inst("v_add3_u32", regs[0], regs[1], regs[2], regs[3]),
                         inst("v_add_u32", regs[0], regs[0], regs[4]))
    with pytest.raises(UserError, match="more than 4 VGPRs"):
        _alloc(m2, v=4)


def _first_fit(module) -> dict:
    """The placement rule, naively: each register in order of its first use (operand order within an instruction)
    at the first base, a multiple of its alignment, where every register of its range is free: each register
    placed there before was last used before this one's first use (straight-line code, no loops)."""
    first, last, order = {}, {}, []
    for pos, ins in enumerate(module.code()):
        for op in ins.operands:
            first.setdefault(op.vreg, pos)
            last[op.vreg] = pos
            if op.vreg not in order:
                order.append(op.vreg)
    placed, out = [], {}
    for v in order:
        base = 0
        while any(b < base + v.count and base < b + w.count and last[w] >= first[v] for w, b in placed):
            base += v.align
        placed.append((v, base))
        out[v] = base
    return out


@pytest.mark.parametrize("seed", range(6))
def test_allocation_places_each_register_at_the_first_free_aligned_range(seed):
    """Random straight-line code in nested modules, registers of 1-8 dwords with alignments 1, 2 and 4: the
    allocation is the naive first fit (the allocator skips busy ranges and walks the module tree in place)."""
    rng = np.random.default_rng(seed)
    regs = [VReg("v", int(n), f"r{i}", align=int(a)) for i, (n, a) in
            enumerate(zip(rng.choice([1, 1, 1, 2, 3, 4, 8], 40), rng.choice([1, 2, 4], 40)))]
    top, stack = Module("top"), []
    module = top
    for _ in range(300):
        if rng.random() < 0.05:             # open a sub-module, or close one
            stack.append(module)
            module = Module("sub")
            stack[-1].add(module)
        elif rng.random() < 0.05 and stack:
            module = stack.pop()
        picked = rng.choice(len(regs), size=int(rng.integers(1, 4)), replace=False)
        module.add(inst("v_mov_b32", *[regs[i] for i in picked]))
    assert _alloc(top, v=1024).assignment == _first_fit(top)


@pytest.mark.parametrize("seed", range(4))
def test_allocation_reads_repeated_code_as_the_code_it_repeats(seed):
    """Modules repeated by ``InstructionSet.repeat`` (nested, repeated again, beside a loop) are read once by the
    allocation (``repeats``): the same placement as walking every instruction."""
    from tensile_asm.isa.instruction_set import InstructionSet
    rng = np.random.default_rng(seed)
    isa = InstructionSet(load_arch("gfx90a"))
    regs = [VReg("v", int(n), f"r{i}", align=int(a)) for i, (n, a) in
            enumerate(zip(rng.choice([1, 1, 2, 4], 200), rng.choice([1, 2], 200)))]

    def block(n, first):        # registers of a window that moves along: most die soon
        return Module("block").add(*[inst("v_mov_b32", *[regs[first + i] for i in rng.choice(8, 2, replace=False)])
                                     for _ in range(n)])
    top, made = Module("top"), []
    for step in range(40):
        if made and rng.random() < 0.4:
            top.add(isa.repeat(made[int(rng.integers(max(0, len(made) - 3), len(made)))]))
        else:
            m = block(int(rng.integers(1, 8)), 4 * step)
            if made and rng.random() < 0.5:
                m.add(isa.repeat(made[-1]))
            made.append(m)
            top.add(m)
        if step == 20:
            top.add(LabelDef(".Lloop"))
        if step == 30:
            top.add(inst("s_cbranch_scc1", Label(".Lloop")))
    top.items.insert(3, isa.repeat(made[-1]))      # a copy before the code it repeats: its registers born in it
    assert len(isa.repeats) > 5
    from tensile_asm.isa.allocation import _intervals
    assert _intervals(top.items, isa.repeats) == _intervals(top.items)      # every register's first and last use
    walked = allocate(top, {"v": 1024, "s": 0, "a": 0})
    read = allocate(top, {"v": 1024, "s": 0, "a": 0}, repeats=isa.repeats)
    assert read.assignment == walked.assignment and read.next_free == walked.next_free


@pytest.mark.parametrize("divisor", [3, 5, 6, 7, 12, 24, 48, 96, 100, 1000])
def test_magic_division_is_exact(divisor):
    magic, shift = magic_for(divisor, 1 << 16)
    x = np.arange(1 << 16, dtype=np.uint64)
    assert np.array_equal(((x * np.uint64(magic)) >> np.uint64(32 + shift)), x // np.uint64(divisor))


def test_arch_tables():
    arch = load_arch("gfx90a")
    assert arch.wavefront_size == 64 and arch.unified_vgpr_file
    assert arch.accum_offset(57) == 60
    assert load_arch("gfx942").cache_modifier("glc") == "sc0"
    with pytest.raises(UserError, match="unknown architecture 'gfx1234'"):
        load_arch("gfx1234")
    occ = arch.occupancy(vgprs=128, agprs=0, sgprs=48, lds_bytes=8192, workgroup_size=256)
    assert occ["waves_per_simd"] == 4 and occ["limited_by"] == "vgpr"
