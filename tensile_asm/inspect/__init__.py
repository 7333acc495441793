"""Static inspection of kernels (``tensile-asm inspect``): resources, occupancy, the main loop's
instruction mix and modelled static efficiency, and LDS bank conflicts from an emulated iteration.

    from tensile_asm.inspect import inspect_file
    for report in inspect_file("k.co"):
        print(report.as_dict()["loop"]["static_efficiency"])
"""

from tensile_asm.inspect.core import KernelReport, inspect_code_object, inspect_file

__all__ = ["KernelReport", "inspect_code_object", "inspect_file", "run"]


def run(args) -> int:
    """The ``tensile-asm inspect`` command (argparse namespace from ``cli/main.py``)."""
    from tensile_asm.inspect.report import render, to_json

    reports = inspect_file(args.file, arch_name=args.arch, kernel=args.kernel, emulate=not args.no_emulate)
    print(to_json(reports) if args.json else render(reports))
    return 0
