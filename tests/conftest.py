from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def have_llvm() -> bool:
    from tensile_asm.errors import ToolchainError
    from tensile_asm.toolchain_paths import find_llvm_tool
    try:
        find_llvm_tool("llvm-mc")
        find_llvm_tool("ld.lld")
        return True
    except ToolchainError:
        return False


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} (the shared reference data) is not beside the checkout")
    return SHARED


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="run the long variants of the randomized tests (many more cases, larger sizes)")
