"""Solution and kernel names, Tensile's way (``Solution.getNameMin`` / ``getMinNaming``).

A name is ``<ProblemType>_MT<MT0>x<MT1>x<DepthU>_[MI<M>x<N>x<K>x<B>_](SE|SN)_<tokens>``; a token is a
parameter's abbreviation followed by its value's abbreviation, tokens sorted by parameter name and joined
with ``_``. *Min naming* puts in a token only for the parameters whose values differ within the set being
named, so a name depends on its set. Kernels (as opposed to solutions) carry ``Kernel: True`` in their state
and ``Kernel`` is always required: kernel names contain ``K1``, the ``SolutionNameMin`` in logic files don't.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from tensile_asm.solution.catalogue import PARAMS, abbreviation

# Never tokens: they are in the prefix, or Tensile leaves them out on purpose.
EXCLUDED = frozenset({
    "ProblemType", "MacroTile", "MacroTile0", "MacroTile1", "DepthU", "LdcEqualsLdd", "MatrixInstruction",
    "MatrixInstM", "MatrixInstN", "MatrixInstK", "MatrixInstB", "MatrixInstBM", "MatrixInstBN",
    "CustomKernelName", "Fp16AltImpl", "Fp16AltImplRound", "StochasticRounding",
})


def value_abbreviation(key: str, value: Any) -> str:
    """``True`` -> 1, ``-1`` -> n1, ``"ShiftPtr"`` -> SP, ``[64, 4, 1]`` -> 64_4_1, ``{0: 1}`` -> 01,
    ``0.5`` -> 0p50, ISA ``[9, 0, 10]`` -> 90a."""
    if key == "ISA":
        return f"{value[0]}{value[1]}{value[2]:x}"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value) if value >= 0 else f"n{-value}"
    if isinstance(value, str):
        return "".join(c for c in value if c.isupper())
    if isinstance(value, float):
        whole, frac = int(value), int(round(value * 100)) - int(value) * 100
        return f"{whole}p{frac:02d}" if frac > 0 else f"{whole}"
    if isinstance(value, tuple):
        return "".join(str(v) for v in value)
    if isinstance(value, list):
        return "_".join(value_abbreviation(key, v) for v in value)
    if isinstance(value, dict):
        return "_".join(f"{k}{v}" for k, v in value.items())
    if value is None:
        return "None"
    raise TypeError(f"cannot abbreviate {key}={value!r}")


def token(key: str, value: Any) -> str:
    return abbreviation(key) + value_abbreviation(key, value)


# Derived keys that are also parameters in Tensile 4.44's validParameters (a config may set them; the derivation
# adjusts them), so its min naming names them (GLVWA/GLVWB) where they differ within the set.
NAMED_DERIVED = frozenset({"GlobalLoadVectorWidthA", "GlobalLoadVectorWidthB"})


def nameable(key: str) -> bool:
    """Keys min naming may use: Tensile 4.44's validParameters (our PARAMS and the two GlobalLoadVectorWidth
    keys). Parameters only older versions knew (MinGlobalWriteVectorWidth, LdsPad, ...) stay in the solution
    but, as in 4.44's TensileCreateLibrary, are never named."""
    if key in EXCLUDED or key.startswith("_"):
        return False
    return key in PARAMS or key in NAMED_DERIVED


def name_with(state: Mapping[str, Any], problem_type_name: str, required: Iterable[str]) -> str:
    """The name of ``state`` with tokens for the ``required`` keys (missing keys are skipped)."""
    if state.get("CustomKernelName"):
        return state["CustomKernelName"]
    out = f"{problem_type_name}_"
    # as Tensile's getNameMin: the tile only when derived (a solution rejected before its tiles has none)
    if all(k in state for k in ("MacroTile0", "MacroTile1", "DepthU")):
        out += f"MT{state['MacroTile0']}x{state['MacroTile1']}x{state['DepthU']}_"
    if state.get("EnableMatrixInstruction") and "MatrixInstM" in state:
        out += f"MI{state['MatrixInstM']}x{state['MatrixInstN']}x{state['MatrixInstK']}x{state['MatrixInstB']}_"
    out += "SE_" if state.get("LdcEqualsLdd") else "SN_"
    req = set(required)
    tokens = [token(k, state[k]) for k in sorted(state) if k in req and k not in EXCLUDED and not k.startswith("_")]
    return out + "_".join(tokens)


def _state(sol, kernel: bool) -> dict[str, Any]:
    state = sol.naming_state()
    if kernel:
        state["Kernel"] = True
    return state


def required_parameters(solutions: Sequence, kernel: bool = True) -> set[str]:
    """The keys whose values differ within ``solutions`` (plus ``Kernel`` for kernel names)."""
    states = [_state(s, kernel) for s in solutions if not s.params.get("CustomKernelName")]
    required = {"Kernel"} if kernel else set()
    if len(states) > 1:
        keys = set().union(*states)
        missing = object()
        for key in keys:
            if nameable(key):
                first = states[0].get(key, missing)
                if any(st.get(key, missing) != first for st in states[1:]):
                    required.add(key)
    return required


def name_min(sol, required: Iterable[str], kernel: bool = True) -> str:
    return name_with(_state(sol, kernel), sol.problem_type.name, required)


def min_names(solutions: Sequence, kernel: bool = True) -> list[str]:
    """Min names over the set: kernel names (with ``K1``) by default, ``kernel=False`` for logic-file
    ``SolutionNameMin`` values. With a single solution there are no tokens but ``K1``."""
    required = required_parameters(solutions, kernel)
    return [name_min(s, required, kernel) for s in solutions]


def name_full(sol, kernel: bool = False) -> str:
    """Every nameable parameter as a token (Tensile's ``getNameFull``), for de-duplication."""
    state = _state(sol, kernel)
    return name_with(state, sol.problem_type.name, [k for k in state if nameable(k) or k == "Kernel"])
