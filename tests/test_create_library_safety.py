"""create-library killed at a random moment and run again, and two builds sharing one kernel cache, give
the same library as a clean build (the real writer and LLVM toolchain, the example logic)."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, have_llvm

EXAMPLE_DIR = REPO / "logic"

pytestmark = pytest.mark.skipif(not have_llvm(), reason="the LLVM AMDGPU toolchain is not available")


def _command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tensile_asm.cli.create_library", "--architecture", "gfx90a", "--quiet",
            *extra, str(EXAMPLE_DIR), str(out)]


def _env(tmp_path: Path) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))   # never the user's cache
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _run(tmp_path: Path, out: Path, *extra: str) -> None:
    proc = subprocess.run(_command(out, *extra), env=_env(tmp_path), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _library(out: Path) -> dict[str, bytes]:
    """Every file of a finished build (temporary files included, so leftovers would show); the manifest's
    absolute paths made relative to ``out``."""
    got = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    if "library/TensileManifest.txt" in got:
        got["library/TensileManifest.txt"] = got["library/TensileManifest.txt"].replace(
            str(out.resolve()).encode(), b"OUT")
    return got


def _same_as(reference: dict[str, bytes], out: Path) -> None:
    got = _library(out)
    assert sorted(got) == sorted(reference)
    assert [name for name in reference if got[name] != reference[name]] == []


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> tuple[dict[str, bytes], float]:
    """A clean, cold build's files, and how long it took (to kill builds within it)."""
    tmp = tmp_path_factory.mktemp("clean")
    t0 = time.monotonic()
    _run(tmp, tmp / "out", "--no-cache")
    seconds = time.monotonic() - t0
    lib = _library(tmp / "out")
    assert "library/TensileLibrary_gfx90a.co" in lib and "library/TensileLibrary.yaml" in lib
    return lib, seconds


@pytest.fixture
def clean_build(clean) -> dict[str, bytes]:
    return clean[0]


def test_killed_at_random_moments_then_rerun_gives_the_clean_library(tmp_path, clean, request):
    rng = random.Random(int(os.environ.get("KILL_SEED", time.time_ns() % 1000)))
    kills = 6 if request.config.getoption("--slow") else 3
    cache, out = tmp_path / "cache", tmp_path / "out"
    clean_build, full = clean        # kill within how long a whole cold build takes here
    moments = []
    for _ in range(kills):
        delay = rng.uniform(0.0, full)
        proc = subprocess.Popen(_command(out, "--cache-dir", str(cache), "--jobs", "2"), env=_env(tmp_path),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)      # the build and its workers, at once
        proc.wait()
        moments.append(round(delay, 2))
    _run(tmp_path, out, "--cache-dir", str(cache))
    _same_as(clean_build, out)
    # What the kills left in the cache is whole entries (and stray temporaries, never read): a build from
    # the cache alone, into a fresh folder, is the clean library too.
    _run(tmp_path, tmp_path / "again", "--cache-dir", str(cache))
    _same_as(clean_build, tmp_path / "again")
    print(f"killed at {moments} s of a {full:.2f} s build")


def test_two_builds_sharing_one_cache_at_once(tmp_path, clean_build):
    cache = tmp_path / "cache"
    procs = [subprocess.Popen(_command(tmp_path / f"out{i}", "--cache-dir", str(cache), "--jobs", "2"),
                              env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    for p in procs:
        _, err = p.communicate()
        assert p.returncode == 0, err
    for i in range(2):
        _same_as(clean_build, tmp_path / f"out{i}")
    built = {(e["architecture"], e["name"]) for e in json.loads(clean_build["support.json"]) if e["built"]}
    entries = sorted(cache.rglob("*.kernel"))
    assert len(entries) == len(built) >= 5 and not [p for p in cache.rglob("*.tmp")]     # no temporary left behind
    # and the cache they filled together builds the same library without writing a kernel
    proc = subprocess.run(_command(tmp_path / "out2", "--cache-dir", str(cache), "--print-timing"),
                          env=_env(tmp_path), capture_output=True, text=True)
    assert proc.returncode == 0 and f"0 written and assembled, {len(built)} from the cache" in proc.stdout, proc.stderr
    _same_as(clean_build, tmp_path / "out2")
