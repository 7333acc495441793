"""Hazard wait states: the ``hazards`` rules of ``isa/<gfx>.yaml`` applied to typed instructions.

A rule names a *producer* (an instruction class and which of its registers: written ones, its MFMA
SrcC, its store data ...) and a *consumer* (a class and an operand role: any source, the SGPR sources,
the lane select of ``v_readlane``, an MFMA's SrcC, the registers it writes ...), and how many wait
states must separate them. As in LLVM's ``GCNHazardRecognizer`` (where the rules come from), the
producer that counts is the *nearest* earlier instruction of the producer class touching the
consumer's operand; ``producer_if``, ``overlap``, ``same_opcode`` and ``between`` (an instruction of
that class issued since the producer) then say whether the rule applies to that pair. Every issued
instruction is one wait state, ``s_nop N`` is N+1. docs/hazards-vs-llvm.md compares the tables with
LLVM 22 (tests/llvm_hazards.py asks llc for its counts).

One engine serves three users: ``required_wait_states`` (a linear history), the Module pass
``insert_wait_states`` (walks branches back through labels, inserts the fewest ``s_nop``), and the
emulator's strict checker (``emulator/strict/hazards.py``, on the executed stream of each wave).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tensile_asm.errors import UserError
from tensile_asm.isa import mfma_passes
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.registers import Reg, Special, VRegRef

# Register keys (the emulator's numbering): SGPRs and specials by their encoding, VGPR i -> 256 + i,
# AGPR i -> 768 + i; two pseudo registers: "a hardware register" (s_setreg/s_getreg) and "anything"
# (rules that need no shared register, e.g. any DGEMM before v_fma_f64).
KEY_V, KEY_A, KEY_HWREG, KEY_ANY = 256, 768, 1400, 1401
EXEC_KEYS, VCC_KEYS, M0_KEYS = (126, 127), (106, 107), (124,)
_SPECIAL = {"vcc": VCC_KEYS, "vcc_lo": (106,), "vcc_hi": (107,), "exec": EXEC_KEYS, "exec_lo": (126,),
            "exec_hi": (127,), "m0": M0_KEYS, "flat_scratch": (102, 103),
            "flat_scratch_lo": (102,), "flat_scratch_hi": (103,)}
_READS_DEST = re.compile(r"^(v_fmac_|v_mac_|v_dot2c_|s_addk_|s_mulk_|s_cmovk_|v_permlane(16|32)_swap_|v_smfmac_)")
_DPP = frozenset({"dpp8", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_shr", "wave_rol", "wave_ror",
                  "row_mirror", "row_half_mirror", "row_bcast", "quad_perm", "row_newbcast", "row_share",
                  "row_xmask"})
_TRANS = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)(_iflag|_clamp|_legacy)?_f(16|32|64)$")
_M0_READERS = re.compile(r"^(s_movrel|s_sendmsg|s_ttracedata|ds_(read|write)_addtid|ds_gws|ds_ordered)")
_VMEM = ("MUBUF", "GLOBAL", "FLAT")


_KEY_BASE = {"s": 0, "v": KEY_V, "a": KEY_A}


def operand_keys(op, assignment=None) -> tuple:
    """The register keys an operand names (() for immediates, labels, SCC, unallocated registers)."""
    if isinstance(op, VRegRef):      # what op.resolve(assignment) names, without building the Reg
        index = assignment.get(op.vreg) if assignment else None
        if index is None:
            return ()
        start = _KEY_BASE[op.vreg.kind] + index + op.offset
        return tuple(range(start, start + op.count))
    if isinstance(op, Reg):
        base = {"s": 0, "v": KEY_V, "a": KEY_A}[op.kind]
        return tuple(range(base + op.index, base + op.index + op.count))
    if isinstance(op, Special):
        return _SPECIAL.get(op.name, ())
    return ()


def key_name(k: int) -> str:
    if k == KEY_HWREG:
        return "a hardware register"
    if k >= KEY_A:
        return f"a{k - KEY_A}"
    if k >= KEY_V:
        return f"v{k - KEY_V}"
    return {106: "vcc_lo", 107: "vcc_hi", 124: "m0", 126: "exec_lo", 127: "exec_hi"}.get(k, f"s{k}")


def wait_states_of(ins: Instruction) -> int:
    """Wait states one issued instruction provides: ``s_nop N`` N+1, every other instruction 1."""
    if ins.opcode == "s_nop":
        return (int(ins.operands[0].value) & 0xF) + 1 if ins.operands else 1     # SIMM16[3:0]
    return 1


# -- instruction classes ------------------------------------------------------------------------------
def _family(ins) -> str | None:
    try:
        return ins.info.family
    except KeyError:
        return None


def _store_data(ins, assignment):
    """The data operand of a store/atomic holding more than 8 bytes (createsVALUHazard), or None."""
    fam = _family(ins)
    if fam not in _VMEM or ins.info.memory not in ("store", "atomic") or ins.info.num_defs:
        return None
    if fam == "MUBUF":
        soffset = ins.operands[3] if len(ins.operands) > 3 else None
        if isinstance(soffset, (Reg, VRegRef)) or (isinstance(soffset, Special) and soffset.name != "off"):
            return None               # a register soffset: no hazard (createsVALUHazard)
        data = ins.operands[0]
    else:
        data = ins.operands[1] if len(ins.operands) > 1 else None
    keys = operand_keys(data, assignment)
    return keys if len(keys) > 2 else None


_FP8_BYTE_SEL = re.compile(r"^v_cvt_(scalef32_)?sr_(fp8|bf8)_")    # op_sel[3:2] picks the destination byte
_SR_FP4 = re.compile(r"^v_cvt_scalef32_sr_pk_fp4_")                # forwards whatever its op_sel
# VOP3P: LLVM tests the destination op_sel bit of src0_modifiers, which on VOP3P is op_sel_hi[0]
# (on by default for packed 16-bit sources, off for the mix ops); llc-22 inserts the wait state after
# v_pk_fma_f16 & co. in real code, so we follow it
_PACKED = re.compile(r"^v_(pk_\w+|dot2_(f32_f16|f32_bf16|i32_i16|u32_u16))$")
_MIX = re.compile(r"^v_(fma|mad)_mix")


def _dst_sel(ins) -> bool:
    """A VALU that writes part of its destination (checkVALUHazards, getDstSelForwardingOperand): SDWA
    dst_sel other than DWORD, the VOP3 op_sel bit of the destination, an FP8 convert writing a byte
    other than byte 0, gfx950's stochastic-rounding FP4 converts, and VOP3P with op_sel_hi[0] set
    (llc-22 probes, docs/hazards-vs-llvm.md)."""
    sel = ins.modifier("dst_sel")
    if sel is not None and sel != 6:
        return True
    if _SR_FP4.match(ins.opcode):
        return True
    hi = ins.modifier("op_sel_hi")
    if _PACKED.match(ins.opcode):
        return hi is None or bool(hi & 1)
    if _MIX.match(ins.opcode):
        return bool(hi and hi & 1)
    op_sel = ins.modifier("op_sel") or 0
    if _FP8_BYTE_SEL.match(ins.opcode):
        return bool(op_sel & 0b1100)
    return bool(op_sel >> max(len(ins.uses), 0) & 1)


CLASSES = {
    "any": lambda i, m: True,
    "valu": lambda i, m: i.opcode.startswith("v_"),
    "salu": lambda i, m: i.opcode.startswith("s_") and (_family(i) or "").startswith("SOP"),
    "mfma": lambda i, m: i.opcode.startswith(("v_mfma_", "v_smfmac_")),
    "dgemm": lambda i, m: i.opcode.startswith("v_mfma_f64"),
    "xdl": lambda i, m: i.opcode.startswith(("v_mfma_", "v_smfmac_")) and bool(m.xdl.search(i.opcode)),
    "trans": lambda i, m: bool(_TRANS.match(i.opcode)),
    "dot": lambda i, m: i.opcode.startswith("v_dot"),
    "accvgpr_read": lambda i, m: i.opcode.startswith("v_accvgpr_read"),
    "accvgpr_write": lambda i, m: i.opcode.startswith("v_accvgpr_write"),
    "vmem": lambda i, m: _family(i) in _VMEM,
    "ds": lambda i, m: _family(i) == "DS",
    "dpp": lambda i, m: any(n in _DPP for n, _ in i.modifiers),
    "setreg": lambda i, m: i.opcode.startswith("s_setreg"),
    "getreg": lambda i, m: i.opcode.startswith("s_getreg"),
    "m0_reader": lambda i, m: bool(_M0_READERS.match(i.opcode)) or i.has_modifier("gds")
    or (_family(i) in _VMEM and (i.has_modifier("lds") or i.opcode.startswith(("global_load_lds_", "scratch_load_lds_")))),
    "vmem_store": lambda i, m: _family(i) in _VMEM and i.info.memory in ("store", "atomic") and not i.info.num_defs,
    "dst_sel": lambda i, m: i.opcode.startswith("v_") and _dst_sel(i),
}


def _split(text: str, sep: str) -> list:
    """Split at ``sep`` outside parentheses (an ``op:`` regex may hold ``(a|b)``)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def _compile_expr(text: str, where: str):
    """``"valu & !mfma | vmem"`` -> predicate(instruction, model). ``op:REGEX`` matches the opcode."""
    terms = []
    for term in _split(text, "|"):
        atoms = []
        for atom in _split(term, "&"):
            atom = atom.strip()
            neg = atom.startswith("!")
            atom = atom.lstrip("!").strip()
            if atom.startswith("op:"):
                rx = re.compile(atom[3:])
                fn = lambda i, m, rx=rx: bool(rx.search(i.opcode))
            elif atom in CLASSES:
                fn = CLASSES[atom]
            else:
                raise UserError(f"{where}: unknown instruction class '{atom}' in '{text}'; use one of "
                                f"{', '.join(CLASSES)} or op:REGEX")
            atoms.append((neg, fn))
        terms.append(tuple(atoms))
    return lambda i, m: any(all(f(i, m) != neg for neg, f in t) for t in terms)


# -- operand roles ------------------------------------------------------------------------------------
_FIXED_ROLES = {"exec": EXEC_KEYS, "vcc": VCC_KEYS, "m0": M0_KEYS, "hwreg": (KEY_HWREG,), "none": (KEY_ANY,)}
_USE_FILTER = {"use": None, "sgpr_use": "s", "vgpr_use": "v", "agpr_use": "a"}


def _recipe(ins: Instruction, role: str) -> tuple:
    """How ``ins`` (its opcode, modifiers and operand count) touches registers in ``role``: (items, kind
    filter), an item an operand position or a fixed group; or (None, None): its store data, computed."""
    try:
        info = ins.info
    except KeyError:
        return (), None
    nd, nops = info.num_defs, len(ins.operands)
    defs = tuple(range(min(nd, nops)))
    if role == "def":
        return defs + _implicit_groups(info.implicit_defs, False), None
    if role in _USE_FILTER:
        items = tuple(range(nd, nops)) + _implicit_groups(info.implicit_uses, True)
        if _READS_DEST.match(ins.opcode):
            items += defs
        return items, _USE_FILTER[role]
    if role == "lane_select":
        return tuple(range(2, min(3, nops))), "s"
    if role == "src0":
        return tuple(range(nd, min(nd + 1, nops))), None
    if role == "src_ab":       # v_smfmac's index (its 4th operand) counts as SrcA/B, as in LLVM (not src2)
        return tuple(range(1, min(4 if ins.opcode.startswith("v_smfmac") else 3, nops))), None
    if role == "src_c":        # v_smfmac accumulates into its destination (LLVM's src2, tied to vdst)
        return (tuple(range(0, min(1, nops))) if ins.opcode.startswith("v_smfmac") else tuple(range(3, min(4, nops)))), None
    if role == "store_data":
        return None, None
    if role in _FIXED_ROLES:
        return (_FIXED_ROLES[role],), None
    raise KeyError(role)


def _key_kind(k: int) -> str:
    """'s', 'v' or 'a': the kind of register a key names ('' for the pseudo registers)."""
    return "s" if k < KEY_V else "v" if k < KEY_A else "a" if k < KEY_HWREG else ""


def _apply(recipe: tuple, ins: Instruction, assignment, memo: dict | None = None, kinds=None) -> tuple:
    """The register groups (one tuple of keys per operand, non-empty) ``recipe`` names in ``ins``.
    ``memo``: id(virtual register slice) -> its keys, for one pass over one program (whose instructions
    keep their operands alive). ``kinds``: the virtual registers of other kinds are left out."""
    items, flt = recipe
    if items is None:
        data = _store_data(ins, assignment)
        return (data,) if data else ()
    ops = ins.operands
    out = []
    for e in items:
        if type(e) is int:
            o = ops[e]
            t = type(o)
            if t is VRegRef:
                k = o.vreg.kind
                if (kinds is not None and k not in kinds) or (flt is not None and k != flt):
                    continue                  # (the filter below would leave it out)
                g = memo.get(id(o)) if memo is not None else None
                if g is None:
                    index = assignment.get(o.vreg) if assignment else None
                    if index is None:
                        continue
                    start = _KEY_BASE[o.vreg.kind] + index + o.offset
                    g = tuple(range(start, start + o.count))
                    if memo is not None:
                        memo[id(o)] = g
            elif t is Reg or t is Special:
                g = operand_keys(o)
                if not g:
                    continue
            else:
                continue
        else:
            g = e
        if flt is None or (g[0] < KEY_V if flt == "s" else (KEY_V <= g[0] < KEY_A if flt == "v" else g[0] >= KEY_A)):
            out.append(g)
    return tuple(out)


def _apply_shape(recipe: tuple, f, assignment, kinds=None) -> tuple:
    """``_apply`` on a ``code_index.Shape`` (its operands' keys computed once): the register groups
    ``recipe`` names in its instruction. ``kinds``: groups of registers of other kinds are left out."""
    items, flt = recipe
    if items is None:
        data = _store_data(f.ins, assignment)
        return (data,) if data else ()
    opkeys = f.opkeys
    out = []
    for e in items:
        if e.__class__ is int:
            g = opkeys[e]
            if not g:
                continue
            if kinds is not None and _key_kind(g[0]) not in kinds:
                continue
        else:
            g = e
        if flt is None or (g[0] < KEY_V if flt == "s" else (KEY_V <= g[0] < KEY_A if flt == "v" else g[0] >= KEY_A)):
            out.append(g)
    return tuple(out)


def _union_shapes(recipe: tuple, shapes, assignment, kinds, keys: set) -> None:
    """Add to ``keys`` every key of the groups ``_apply_shape(recipe, f, assignment, kinds)`` gives, over
    ``shapes`` (of one class)."""
    items, flt = recipe
    if items is None:
        for f in shapes:
            data = _store_data(f.ins, assignment)
            if data:
                keys.update(data)
        return
    for e in items:
        if e.__class__ is not int:
            if flt is None or _of_kind(e[0], flt):
                keys.update(e)
            continue
        for f in shapes:
            g = f.opkeys[e]
            if g and (kinds is None or _key_kind(g[0]) in kinds) and (flt is None or _of_kind(g[0], flt)):
                keys.update(g)


def _of_kind(k: int, flt: str) -> bool:
    """A group starting at key ``k`` passes a role's register-kind filter ('s', 'v' or 'a')."""
    return k < KEY_V if flt == "s" else (KEY_V <= k < KEY_A if flt == "v" else k >= KEY_A)


def _groups(ins: Instruction, role: str, assignment) -> tuple:
    """The register groups (one tuple of keys per operand) ``ins`` touches in ``role``."""
    return _apply(_recipe(ins, role), ins, assignment)


_IMPLICIT_GROUPS: dict = {}


def _implicit_groups(names: tuple, uses: bool) -> tuple:
    """The groups of an opcode's implicit operands (EXEC left out of the reads: every VALU reads it)."""
    key = (names, uses)
    got = _IMPLICIT_GROUPS.get(key)
    if got is None:
        got = _IMPLICIT_GROUPS[key] = tuple(_SPECIAL[n] for n in names if n in _SPECIAL and not (uses and n == "exec"))
    return got


ROLES = ("def", "use", "sgpr_use", "vgpr_use", "agpr_use", "lane_select", "src0", "src_ab", "src_c",
         "store_data", "exec", "vcc", "m0", "hwreg", "none")
# Roles a producer may name: registers it writes (RAW/WAW), reads (WAR), or a pseudo register.
_PRODUCER_ROLES = ("def", "src_c", "store_data", "hwreg", "none", "exec", "vcc", "m0")


@dataclass(frozen=True)
class Rule:
    name: str
    llvm: str
    producer: object          # predicate: which instructions are candidates for "the nearest producer"
    writes: str               # producer role
    consumer: object
    reads: str                # consumer role
    wait_states: object       # int, or {passes: {2: 5, ...}} / {passes_plus: k}
    producer_if: object = None
    overlap: str = "any"      # any | exact | partial
    same_opcode: bool | None = None
    text: str = ""            # the rule as written, for messages
    max_wait: int = 0
    between: object = None    # predicate: the rule holds only if such an instruction issued after the producer


@dataclass(frozen=True)
class Violation:
    rule: Rule
    producer: Instruction
    consumer: Instruction
    keys: tuple
    present: int
    required: int

    def message(self) -> str:
        regs = ", ".join(key_name(k) for k in self.keys if k != KEY_ANY) or "(no register)"
        return (f"hazard '{self.rule.name}' ({self.rule.llvm}): {_where(self.consumer)} after {_where(self.producer)} "
                f"[{regs}] has {self.present} wait state(s) between them, {self.required} required "
                f"({self.required - self.present} more: s_nop N gives N+1, at most 8 each)")


def _where(ins: Instruction) -> str:
    where = []
    if ins.address is not None:
        where.append(f"0x{ins.address:x}")
    if ins.source_line is not None:
        where.append(f"line {ins.source_line}")
    return f"{' '.join(where) or 'instruction'} `{ins.render()}`"


class Profile:
    """What one instruction means to the rules: its wait states, the groups it produces per rule,
    the consumer checks that can fire on it."""

    __slots__ = ("ws", "produces", "consumes")

    def __init__(self, ws, produces, consumes):
        self.ws, self.produces, self.consumes = ws, produces, consumes


_EMPTY_PROFILES: dict = {}


def _empty_profile(ins: Instruction | None) -> Profile:
    """The profile of an instruction (None: not an ``s_nop``) that takes part in no live rule (one shared object per wait-state
    count: profiles are never changed after they are made)."""
    ws = wait_states_of(ins) if ins is not None and ins.opcode == "s_nop" else 1
    got = _EMPTY_PROFILES.get(ws)
    if got is None:
        got = _EMPTY_PROFILES[ws] = Profile(ws, {}, ())
    return got


class HazardModel:
    """The compiled ``hazards`` table of one architecture."""

    def __init__(self, arch: Arch):
        where = f"isa/{arch.name}.yaml"
        table = arch.extra.get("hazards")
        if table is None:
            raise UserError(f"{where} has no 'hazards' table; copy the one of a sibling architecture")
        self.arch = arch.name
        self.xdl = re.compile("|".join(table.get("xdl", ())) or r"(?!)")
        passes = arch.extra.get("issue_cycles", {}).get("mfma_passes", ())
        self._passes = mfma_passes.compile_table(passes, f"{where}")
        rules = []
        for i, r in enumerate(table.get("rules", ())):
            w = f"{where}: hazards.rules[{i}] ({r.get('name', '?')})"
            try:
                if r["writes"] not in _PRODUCER_ROLES or r["reads"] not in ROLES:
                    raise UserError(f"{w}: 'writes' must be one of {_PRODUCER_ROLES}, 'reads' one of {ROLES}")
                rule = Rule(r["name"], r.get("llvm", ""), _compile_expr(r["producer"], w), r["writes"],
                            _compile_expr(r["consumer"], w), r["reads"], r["wait_states"],
                            _compile_expr(r["producer_if"], w) if "producer_if" in r else None,
                            r.get("overlap", "any"), r.get("same_opcode"),
                            f"{r['producer']} -> {r['consumer']}", _max_wait(r["wait_states"], w),
                            _compile_expr(r["between"], w) if "between" in r else None)
            except KeyError as e:
                raise UserError(f"{w} lacks {e}; every rule needs name, producer, writes, consumer, reads, "
                                f"wait_states") from None
            rules.append(rule)
        self.rules = tuple(rules)
        self._classes: dict = {}
        self._between_cache: dict = {}
        self.max_wait = max((r.max_wait for r in rules), default=0)

    def passes(self, ins) -> int:
        """Passes of an MFMA (an Instruction; an opcode string counts as having no modifiers)."""
        return mfma_passes.passes_of(self._passes, ins, self.arch)

    def classes(self, ins: Instruction) -> tuple:
        """(rules ``ins`` can produce for, rules it can be the consumer of), by opcode and modifiers."""
        key = (ins.opcode, ins.modifiers, len(ins.operands))
        hit = self._classes.get(key)
        if hit is None:
            hit = self._classes[key] = (tuple(i for i, r in enumerate(self.rules) if r.producer(ins, self)),
                                        tuple(i for i, r in enumerate(self.rules) if r.consumer(ins, self)))
        return hit

    def _between(self, idx: int, ins: Instruction) -> bool:
        """Rule ``idx``'s ``between`` class holds for ``ins`` (answered once per opcode, modifiers and
        operand count, as ``classes``)."""
        key = (idx, ins.opcode, ins.modifiers, len(ins.operands))
        hit = self._between_cache.get(key)
        if hit is None:
            hit = self._between_cache[key] = bool(self.rules[idx].between(ins, self))
        return hit

    def profile(self, ins: Instruction, assignment=None) -> Profile:
        """Every rule ``ins`` may produce for or consume (no knowledge of the rest of the program)."""
        return self._profile_all(ins, assignment)

    def profiles(self, items, assignment=None, prune: bool = True) -> list:
        """Profiles of a program's instructions (None for labels and comments). With ``prune``, only the
        rules that can fire in this program are kept (``shape_profiles``): what can never fire costs nothing
        later."""
        if not prune:
            return [None if not isinstance(x, Instruction) else self._profile_all(x, assignment) for x in items]
        from tensile_asm.isa.code_index import Index
        index = Index(assignment)
        shapes = [index.shape(x) if x.__class__ is Instruction or isinstance(x, Instruction) else None for x in items]
        return self.profiles_of(shapes, self.shape_profiles(shapes, assignment))

    @staticmethod
    def profiles_of(shapes, live: dict) -> list:
        """Per position of ``shapes`` (``code_index.Shape``, None for a label): its profile in ``live``
        (``shape_profiles``), else the empty one of its wait states; None for a label."""
        empty1 = _empty_profile(None)
        out = []
        for f in shapes:
            if f is None:
                out.append(None)
            else:
                p = live.get(f)
                out.append(p if p is not None else empty1 if f.ins.opcode != "s_nop" else _empty_profile(f.ins))
        return out

    def shape_profiles(self, shapes, assignment=None) -> dict:
        """Shape -> profile, for the shapes of a program (``code_index.Shape`` per instruction; None entries
        are ignored) that take part in a rule that can fire in it ({} when none can): those where some
        instruction produces a register that some consumer of the rule reads in its role (a profile's
        ``produces`` and ``consumes`` then hold only those rules, and a consumer only the groups that
        overlap a produced register). Instructions of one shape have one profile, so the work is per shape."""
        rules = self.rules
        known, classes = self._classes, self.classes
        distinct = dict.fromkeys(shapes)
        distinct.pop(None, None)
        at: dict = {}                         # class (id of classes()' one tuple per class) -> its shapes
        first: dict = {}                      # class -> (its tuple, its first instruction)
        for f in distinct:
            x = f.ins
            pc = known.get((x.opcode, x.modifiers, len(x.operands)))
            if pc is None:
                pc = classes(x)
            where = at.get(id(pc))
            if where is None:
                where = at[id(pc)] = []
                first[id(pc)] = (pc, x)
            where.append(f)
        p_any, c_any = set(), set()
        for pc, _ in first.values():
            p_any.update(pc[0])
            c_any.update(pc[1])
        live = p_any & c_any                  # rules with both a producer and a consumer instruction
        # a rule that holds only with a `between` instruction issued since the producer cannot fire
        # in a program without one
        live = {idx for idx in live if rules[idx].between is None
                or any(self._between(idx, ins) for _, ins in first.values())}
        if not live:
            return {}

        # per class, the roles it takes part in for live rules: ((role, recipe, (rule, ...)), ...) per side
        def by_role(ins, idxs, side):
            roles: dict = {}
            for idx in idxs:
                if idx in live:
                    roles.setdefault(getattr(rules[idx], side), []).append(idx)
            return tuple((role, _recipe(ins, role), tuple(ids)) for role, ids in roles.items())

        plans = {c: (by_role(x, pc[0], "writes"), by_role(x, pc[1], "reads")) for c, (pc, x) in first.items()}
        # The groups each shape touches in its roles, per side. Per live rule, the side with fewer shapes
        # goes first; the other side then keeps only groups of the register kinds (SGPR, VGPR, AGPR) the
        # first side touched for that rule: a group of another kind overlaps nothing there, so it can never
        # be (or meet) the nearest producer of a read.
        size: dict = {}
        for c, (pc, _) in first.items():
            for side in (0, 1):
                for idx in pc[side]:
                    if idx in live:
                        size[side, idx] = size.get((side, idx), 0) + len(at[c])
        lead = {idx: 0 if size.get((0, idx), 0) <= size.get((1, idx), 0) else 1 for idx in live}
        touched: dict = {}                    # (class, side, role) -> keys
        full: set = set()                     # (class, side, role) whose keys are all of its groups'

        def sweep(lead_side: bool, kinds) -> tuple:
            for c, where in at.items():
                for side in (0, 1):
                    for role, recipe, ids in plans[c][side]:
                        sel = tuple(idx for idx in ids if (lead[idx] == side) == lead_side)
                        if not sel or (c, side, role) in full:
                            continue
                        kk = None if kinds is None else frozenset().union(*(kinds.get(x, ()) for x in sel))
                        if kk is not None and not kk:
                            continue
                        keys = touched.get((c, side, role))
                        if keys is None:
                            keys = touched[(c, side, role)] = set()
                        _union_shapes(recipe, where, assignment, kk, keys)
                        if kk is None:
                            full.add((c, side, role))
            per_rule = ({}, {})               # per side, rule -> the keys its instructions of that side touch
            for (c, side, role), keys in touched.items():
                for r, _, ids in plans[c][side]:
                    if r == role:
                        for idx in ids:
                            per_rule[side].setdefault(idx, set()).update(keys)
            return per_rule

        led = sweep(True, None)
        produced, consumed = sweep(False, {idx: {_key_kind(k) for k in led[lead[idx]].get(idx, ())}
                                           for idx in live})
        active = {idx for idx, keys in produced.items() if idx in consumed and not keys.isdisjoint(consumed[idx])}
        out: dict = {}
        if not active:
            return out
        # the groups of the rules that can fire, per shape (of another register kind than the rule's other
        # side touches, a group overlaps nothing: kept, it never matters)
        for c, where in at.items():
            pc = first[c][0]
            recipes = {(side, role): recipe for side in (0, 1) for role, recipe, _ in plans[c][side]}
            fp = tuple((idx, recipes[0, rules[idx].writes]) for idx in pc[0] if idx in active)
            fc = tuple((idx, recipes[1, rules[idx].reads]) for idx in pc[1] if idx in active)
            if not fp and not fc:
                continue
            for f in where:
                produces, consumes = {}, []
                for idx, recipe in fp:
                    g = _apply_shape(recipe, f, assignment)
                    if g:
                        produces[idx] = g
                for idx, recipe in fc:
                    g = _apply_shape(recipe, f, assignment)
                    if g:
                        keys = produced[idx]
                        g = tuple(grp for grp in g if not keys.isdisjoint(grp))
                        if g:
                            consumes.append((idx, g))
                if produces or consumes:
                    out[f] = Profile(wait_states_of(f.ins), produces, tuple(consumes))
        return out

    def _profile_all(self, ins: Instruction, assignment) -> Profile:
        """Every rule ``ins`` may produce for or consume (no knowledge of the rest of the program)."""
        producers, consumers = self.classes(ins)
        produces = {}
        for idx in producers:
            g = _groups(ins, self.rules[idx].writes, assignment)
            if g:
                produces[idx] = g
        consumes = []
        for idx in consumers:
            g = _groups(ins, self.rules[idx].reads, assignment)
            if g:
                consumes.append((idx, g))
        return Profile(wait_states_of(ins), produces, tuple(consumes))

    def required(self, idx: int, producer: Instruction, producer_groups, consumer: Instruction, group) -> int:
        """Wait states rule ``idx`` requires between this nearest producer and the consumer (0: none)."""
        r = self.rules[idx]
        if r.producer_if is not None and not r.producer_if(producer, self):
            return 0
        if r.same_opcode is not None and (producer.opcode == consumer.opcode) != r.same_opcode:
            return 0
        if r.overlap != "any":
            exact = any(set(g) == set(group) for g in producer_groups)
            if exact != (r.overlap == "exact"):
                return 0
        w = r.wait_states
        if isinstance(w, int):
            return w
        n = self.passes(producer)
        if "passes_plus" in w:
            return n + int(w["passes_plus"])
        table = {int(k): int(v) for k, v in w["passes"].items()}
        bigger = [k for k in sorted(table) if k >= n]
        return table[bigger[0]] if bigger else table[max(table)]

    def violations(self, history, ins: Instruction, profile: Profile | None = None, assignment=None) -> list:
        """``history``: (instruction, profile, wait states between it and ``ins``), newest first."""
        profile = profile or self.profile(ins, assignment)
        out = []
        for idx, groups in profile.consumes:
            between = self.rules[idx].between
            for group in groups:
                gs = set(group)
                seen = between is None            # a `between` instruction at or after this entry (or none asked)
                for p_ins, p_prof, dist in history:
                    if not seen:
                        seen = self._between(idx, p_ins)
                    pg = p_prof.produces.get(idx)
                    if pg is None:
                        continue
                    for g in pg:
                        if not gs.isdisjoint(g):
                            break
                    else:
                        continue
                    if not seen:
                        break
                    need = self.required(idx, p_ins, pg, ins, group)
                    if dist < need and not any(v.rule is self.rules[idx] and v.keys == group for v in out):
                        out.append(Violation(self.rules[idx], p_ins, ins, group, dist, need))
                    break
        return out


def _max_wait(w, where) -> int:
    if isinstance(w, int):
        return w
    if hasattr(w, "keys") and "passes" in w:
        return max(int(v) for v in w["passes"].values())
    if hasattr(w, "keys") and "passes_plus" in w:
        return 16 + int(w["passes_plus"])
    raise UserError(f"{where}: wait_states must be an integer, {{passes: {{2: N, ...}}}} or {{passes_plus: N}}")


_MODELS: dict = {}


def hazard_model(arch: Arch) -> HazardModel:
    """The compiled rules of ``arch`` (built once per architecture name)."""
    model = _MODELS.get(arch.name)
    if model is None:
        model = _MODELS[arch.name] = HazardModel(arch)
    return model


def _linear(history, model, assignment):
    out, dist = [], 0
    for h in reversed(list(history)):
        prof = model.profile(h, assignment)
        out.append((h, prof, dist))
        dist += prof.ws
        if dist >= model.max_wait:
            break
    return out


def hazards(history, instruction: Instruction, arch: Arch, assignment=None) -> list:
    """Every rule ``instruction`` violates after ``history`` (instructions, oldest first)."""
    model = hazard_model(arch)
    return model.violations(_linear(history, model, assignment), instruction, assignment=assignment)


def required_wait_states(history, instruction: Instruction, arch: Arch, assignment=None) -> int:
    """Wait states still missing before ``instruction`` after ``history`` (oldest first); 0 when none."""
    return max((v.required - v.present for v in hazards(history, instruction, arch, assignment)), default=0)


from tensile_asm.isa.hazard_pass import insert_wait_states  # noqa: E402  (the Module pass, same engine)

__all__ = ["HazardModel", "Violation", "hazard_model", "hazards", "required_wait_states", "insert_wait_states",
           "operand_keys", "wait_states_of", "key_name"]
