"""Code nobody here wrote runs on the emulator: kernels clang-22 compiled from HIP C++ (gfx90a) and
Triton compiled (gfx942, gfx950), committed under tests/data/fixtures/ by tools/make_emulator_fixtures.py.

Each fixture runs in strict mode on random data (never zeros; outputs poisoned with NaN or a bit
pattern) and its outputs must match the numpy expressions of its JSON. No compiler is needed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.emulator import Emulator

FIXTURES = Path(__file__).parent / "data" / "fixtures"
SPECS = sorted(FIXTURES.glob("*.json"))

# Fixtures the emulator cannot run yet: name -> the missing instruction (xfail, strict).
XFAIL: dict = {}


def _bfloat16(codes: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):                 # NaN codes (left out when encoding)
        return (codes.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _float8_e4m3(codes: np.ndarray) -> np.ndarray:
    """OCP FP8 E4M3 (gfx950): bias 7, subnormals, no infinities, S.1111.111 is NaN."""
    c = codes.astype(np.int64)
    e, m = (c >> 3) & 15, c & 7
    mag = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    mag = np.where((e == 15) & (m == 7), np.nan, mag)
    return np.where(c & 0x80, -mag, mag)


def _float8_e5m2(codes: np.ndarray) -> np.ndarray:
    """OCP FP8 E5M2 (gfx950): bias 15, subnormals, exponent 31 is Inf (mantissa 0) or NaN."""
    c = codes.astype(np.int64)
    e, m = (c >> 2) & 31, c & 3
    mag = np.where(e == 0, m / 4 * 2.0 ** -14, (1 + m / 4) * 2.0 ** (e - 15))
    mag = np.where(e == 31, np.where(m == 0, np.inf, np.nan), mag)
    return np.where(c & 0x80, -mag, mag)


# array "encoding": the kernel gets the codes (the array's dtype), checks see the decoded values
ENCODINGS = {"bfloat16": _bfloat16, "float8_e4m3": _float8_e4m3, "float8_e5m2": _float8_e5m2}


def _encode_nearest(x: np.ndarray, dtype: np.dtype, decode) -> np.ndarray:
    """The codes of the representable values nearest to x."""
    codes = np.arange(2 ** (8 * dtype.itemsize)).astype(dtype)
    vals = decode(codes)
    keep = np.isfinite(vals)
    order = np.argsort(vals[keep], kind="stable")
    codes, vals = codes[keep][order], vals[keep][order]
    hi = np.clip(np.searchsorted(vals, x), 1, len(vals) - 1)
    nearer_lo = np.abs(x - vals[hi - 1]) <= np.abs(vals[hi] - x)
    return np.where(nearer_lo, codes[hi - 1], codes[hi]).astype(dtype)


def make_args(spec: dict, rng: np.random.Generator) -> tuple[list, dict]:
    """The launch arguments and, by name, every array/scalar (inputs as the kernel sees them, encoded
    arrays decoded)."""
    values, named = [], {}
    for a in spec["args"]:
        if "scalar" in a:
            v = np.dtype(a["scalar"]).type(a["value"])
        else:
            dtype, shape = np.dtype(a["array"]["dtype"]), tuple(a["array"]["shape"])
            init = a["init"]
            if init == "poison":
                v = np.full(shape, np.nan, dtype) if dtype.kind == "f" else np.full(shape, 0xA5, dtype)
            elif init == "uniform":
                lo, hi = a["range"]
                v = rng.uniform(lo, hi, shape)
                v = np.where(np.abs(v) < 1e-3, 0.5, v)                         # never zeros
                if "encoding" in a:
                    decode = ENCODINGS[a["encoding"]]
                    codes = _encode_nearest(v, dtype, decode)
                    values.append(codes)
                    named[a["name"]] = decode(codes)
                    continue
                v = v.astype(dtype)
            elif init == "randint":
                lo, hi = a["range"]
                v = rng.integers(lo, hi, shape, endpoint=True).astype(dtype)
            else:
                raise AssertionError(f"{spec['name']}: unknown init {init!r} of {a['name']}")
        values.append(v)
        named[a["name"]] = v
    return values, named


def run_fixture(spec: dict, seed: int = 0):
    rng = np.random.default_rng(seed)
    args, named = make_args(spec, rng)
    inputs = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in named.items()}
    emu = Emulator.load(FIXTURES / spec["code_object"], strict=True)
    result = emu.launch(spec["kernel"], grid=tuple(spec["grid"]), block=tuple(spec["block"]), args=args,
                        lds_bytes=spec.get("lds_bytes"))
    return result, inputs, named


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_fixture_matches_numpy(path):
    spec = json.loads(path.read_text())
    if spec["name"] in XFAIL:
        pytest.xfail(XFAIL[spec["name"]])
    _, inputs, outputs = run_fixture(spec)
    for c in spec["checks"]:
        got = outputs[c["output"]]
        expect = np.asarray(eval(c["expect"], {"np": np}, dict(inputs)))      # noqa: S307 (our own data)
        assert got.shape == expect.shape, f"{spec['name']}: {c['output']} shape {got.shape} != {expect.shape}"
        g, e = got.astype(np.float64), expect.astype(np.float64)
        assert np.isfinite(g).all(), f"{spec['name']}: {c['output']} has unwritten (poisoned) elements"
        bad = np.abs(g - e) > c["atol"] + c["rtol"] * np.abs(e)
        assert not bad.any(), (f"{spec['name']}: {c['output']} differs at {np.flatnonzero(bad)[:8]} "
                               f"(got {g.ravel()[bad.ravel()][:4]}, expected {e.ravel()[bad.ravel()][:4]})")


def test_fixture_inventory():
    """Both compilers are represented, every JSON names an existing code object, and they stay small."""
    names = {p.stem for p in SPECS}
    assert sum(n.startswith("hip_") for n in names) >= 5
    assert sum(n.startswith("triton_") for n in names) >= 3
    total = 0
    for p in SPECS:
        spec = json.loads(p.read_text())
        co = FIXTURES / spec["code_object"]
        assert co.is_file(), f"{p.name} names {co.name}, which is missing"
        total += co.stat().st_size + p.stat().st_size
    assert total < 400_000


def test_sdwa_fixture_is_sdwa_code():
    """hip_bytes_sdwa is there for the SDWA LLVM emits for 8-bit integer and fp16 code: byte/word
    source selection with sext, results written into a word, an SGPR source."""
    from tensile_asm.codeobject import kernel_instructions, read_code_object

    found = kernel_instructions(read_code_object(FIXTURES / "hip_bytes_sdwa.co"), "bytes_sdwa")
    sdwa = [i for i in found if i.opcode.endswith("_sdwa")]
    assert {"v_mul_i32_i24_sdwa", "v_or_b32_sdwa", "v_add_f16_sdwa", "v_mul_f16_sdwa"} <= {i.opcode for i in sdwa}
    assert any(i.has_modifier("sext") for i in sdwa) and any(i.modifier("dst_sel") == 5 for i in sdwa)


def test_gfx950_gemm_fixtures_use_the_transpose_loads():
    """The gfx950 Triton GEMMs are there for the LDS transpose loads (B is N-contiguous in LDS): a wrong
    lane mapping of ds_read_b64_tr_b16/_b8 gives a wrong product."""
    from tensile_asm.codeobject import kernel_instructions, read_code_object

    for name, op in (("f16", "ds_read_b64_tr_b16"), ("bf16", "ds_read_b64_tr_b16"), ("fp8", "ds_read_b64_tr_b8"),
                     ("at_f16", "ds_read_b64_tr_b16"), ("at_fp8", "ds_read_b64_tr_b8")):
        co = read_code_object(FIXTURES / f"triton_gfx950_matmul_{name}.hsaco")
        kernel = "matmul_at_kernel" if name.startswith("at_") else "matmul_kernel"
        assert op in {i.opcode for i in kernel_instructions(co, kernel)}, name


@pytest.mark.parametrize("name,load", [("atomic_add_f32", "global_load_dword"), ("atomic_max_f32", "global_load_dword"),
                                       ("atomic_add_uniform", "s_load_dword")])
def test_atomic_fixtures_are_cmpswap_retry_loops(name, load):
    """The hip_atomic_* fixtures are there for the loop clang emits for a float atomicAdd/atomicMax
    without a native instruction: a plain load of the address (an s_load_dword where the address is
    wave-uniform), then a global_atomic_cmpswap that a branch repeats while a lane's compare failed.
    Strict mode's global race check must accept it (strict/global_races.py), which proves nothing if clang
    emitted a native global_atomic_add_f32 instead (it does with -munsafe-fp-atomics)."""
    from tensile_asm.codeobject import kernel_instructions, read_code_object
    from tensile_asm.isa.registers import Label

    found = kernel_instructions(read_code_object(FIXTURES / f"hip_{name}.co"), name)
    atomics = {i.opcode for i in found if "atomic" in i.opcode}
    assert atomics == {"global_atomic_cmpswap"}, atomics
    cas = next(i for i in found if i.opcode == "global_atomic_cmpswap")
    at = cas.address
    assert any(i.opcode.startswith("s_cbranch") and i.address > at and isinstance(i.operands[0], Label)
               and i.operands[0].address <= at for i in found), "no branch back to the cmpswap"
    # the load of the cmpswap's address: the same vaddr and saddr; for s_load, the same base SGPRs
    same = (lambda i: i.operands[1:3] == (cas.operands[1], cas.operands[3])) if load.startswith("global") else \
        (lambda i: i.operands[1] == cas.operands[3])
    assert any(i.opcode == load and i.address < at and same(i) for i in found), f"no {load} of the cmpswap's address"


@pytest.mark.parametrize("name", ["hip_atomic_add_f32", "hip_atomic_max_f32", "hip_atomic_add_uniform"])
def test_atomic_fixtures_load_what_other_workgroups_updated_atomically(name, monkeypatch):
    """They pass strict mode by the race check's rule (an aligned load of a cell other workgroups write
    only with atomics is an atomic load), not because no load meets another workgroup's atomic."""
    from tensile_asm.emulator.launch import GlobalRaces          # the class launches use, wherever it lives

    met, load = [], GlobalRaces.load

    def spy(self, a, off, nbytes):
        st = self.state.get(id(a))
        if st is not None and st.owner is not None:
            prev = st.owner[st.cells(a, off, nbytes)]
            met.append(bool(((prev <= -2) & (prev != -2 - self.current)).any()))
        load(self, a, off, nbytes)

    monkeypatch.setattr(GlobalRaces, "load", spy)
    run_fixture(json.loads((FIXTURES / f"{name}.json").read_text()))
    assert any(met)
