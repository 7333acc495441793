"""Write predicate_order_cases.json.gz: random lists of library-row predicates (problem rows: problem-type And
predicates, EqualityMatching, perf metrics, SizeInRange regions, TruePred; hardware rows: processors with and
without CUCount/IsAPU, TruePred) and how Tensile 4.44's own Python sorts them (Properties.Predicate.__lt__ and
Hardware.HardwarePredicate.__lt__, as PredicateLibrary.merge sorts rows). Run with Tensile's Python:

    ~/.cache/tensile-ref/venv/bin/python tests/data/tensile_reference/make_predicate_order_cases.py \
        tests/data/tensile_reference/predicate_order_cases.json.gz ~/.cache/tensile-ref/src

(~/.cache/tensile-ref is what ../shared/reference/tensile/tensile-tcl unpacks Tensile 4.44.0 a164ed70 into.)
"""
import json
import random
import sys
sys.path.insert(0, sys.argv[2])
from Tensile import Contractions, Properties, Hardware
from Tensile.DataType import DataType
from Tensile.Utils import state
rng = random.Random(5)
types = ["S", "D", "H", "B", "I8", "I"]
def ptpreds():
    a = DataType(rng.choice(types)); d = DataType(rng.choice(types))
    preds = [Contractions.ProblemPredicate("TypesEqual", value=(a, a, d, d)),
             Contractions.ProblemPredicate("HighPrecisionAccumulate", value=rng.random() < 0.5),
             Contractions.ProblemPredicate("F32XdlMathOp", value=DataType(rng.choice(["S", "X"]))),
             Contractions.ProblemPredicate("StochasticRounding", value=rng.random() < 0.3)]
    return Contractions.ProblemPredicate.And(preds)
def other():
    c = rng.random()
    if c < 0.2: return Properties.Predicate(tag="TruePred")
    if c < 0.3: return Properties.Predicate(tag="EqualityMatching")
    if c < 0.4: return Properties.Predicate(tag=rng.choice(["CUEfficiency", "Fp16AltImpl", "ExperimentalGrid"]))
    if c < 0.5: return Contractions.ProblemPredicate("SizeInRange", index=rng.randrange(2), value={"min": rng.randrange(3), "max": rng.randrange(5, 9)})
    return ptpreds()
def hw():
    c = rng.random()
    if c < 0.15: return Hardware.HardwarePredicate("TruePred")
    g = (9, 0, rng.choice([0, 6, 8, 10]))
    cu = rng.choice([None, None, 104, 110, 120]); apu = rng.choice([None, None, 0, 1])
    return Hardware.HardwarePredicate.FromHardware(g, cu, apu)
out = []
for kind, gen in (("problem", other), ("hardware", hw)):
    for _ in range(150):
        preds = []
        for _ in range(rng.randrange(2, 7)):
            p = gen()
            if p not in preds: preds.append(p)
        try:
            srt = sorted(preds)
        except TypeError:
            continue
        out.append({"kind": kind, "in": [state(p) for p in preds], "sorted": [state(p) for p in srt]})
import gzip; gzip.open(sys.argv[1], "wt").write(json.dumps(out))
print(len(out))
