"""Strict mode: the checks that make a kernel that only works by luck fail on the emulator.

    waitcnt.py       outstanding memory operations per wave (vmcnt, lgkmcnt, expcnt) and the read errors
    hazards.py       the hazard rules of isa/<gfx>.yaml on the stream each wave executes
    expcnt.py        writes that a GDS operation's expcnt lock forbids
    lds_races.py     LDS races between the waves of a workgroup, per barrier interval
    global_races.py  global-memory races between the workgroups of one launch
"""
