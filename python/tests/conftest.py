"""Shared fixtures: the CLI to compare with, the fonts and MIDI files on this machine."""
import glob
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FONT = "/usr/share/sounds/sf2/TimGM6mb.sf2"
OPENMSX = sorted(glob.glob("/usr/share/games/openttd/baseset/openmsx/*.mid"))
DAMAGED = sorted(glob.glob(str(ROOT / "Tests/Fixtures/DamagedMIDI/*.[mM][iI][dD]")))
# Short renders keep the step quick: the first 20 s of each piece, at 22.05 kHz.
SHORT = {"max_duration": 20.0}
RATE = 22050


def cli_path() -> str:
    """The `carillon` binary to compare with: $CARILLON, else the debug build."""
    path = os.environ.get("CARILLON") or str(ROOT / ".build/debug/carillon")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no carillon binary at {path} (swift build, or set CARILLON)")
    return path


def cli(*arguments, check=True):
    return subprocess.run([cli_path(), *map(str, arguments)], capture_output=True, text=True, check=check)


def float_wav(path) -> bytes:
    """The data chunk of a 32-bit float WAV file, as it is on disk."""
    data = Path(path).read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", path
    at = 12
    while at + 8 <= len(data):
        chunk, size = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        if chunk == b"fmt ":
            format_tag = int.from_bytes(data[at + 8:at + 10], "little")
            bits = int.from_bytes(data[at + 22:at + 24], "little")
            # WAVE_FORMAT_IEEE_FLOAT, or EXTENSIBLE with the float subformat: 32 bits either way.
            assert format_tag in (3, 0xFFFE) and bits == 32, f"{path}: not 32-bit float"
        if chunk == b"data":
            return data[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    raise AssertionError(f"{path}: no data chunk")


@pytest.fixture(scope="session")
def renderer():
    import carillon
    return carillon.Renderer(FONT, sample_rate=RATE, **SHORT)
