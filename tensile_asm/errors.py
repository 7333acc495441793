"""Errors a user can cause. Each carries one sentence naming the file, field and value, and the fix.

The command-line entry points print these without a traceback; anything else is our bug.
"""


class UserError(Exception):
    """A mistake in the user's input or environment, reported as one clear sentence."""


class ToolchainError(UserError):
    """The LLVM AMDGPU toolchain is missing, or it rejected what we gave it."""


class EmulationError(Exception):
    """The emulator found the kernel doing something real hardware would not forgive.

    Raised for strict-mode violations (a register read before its load was waited for, ...) and for
    instructions the emulator does not know. The message names the instruction address and what is wrong.
    """
