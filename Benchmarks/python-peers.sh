#!/usr/bin/env bash
# The Python package against pretty_midi's fluidsynth(), symusic and the CLI batch, side by side
# in one run (Benchmarks/python-peers.py), in a venv this script makes (bench-out/dataset-venv).
#   Benchmarks/python-peers.sh [--only NAME,NAME] [FILES...]      (default: the 31 openmsx songs)
#   FONT=… CARILLON=path/to/carillon CARILLON_BUILD_FLAGS="…" (the library's build, as scripts/test's)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=Benchmarks/dataset-common.sh
source Benchmarks/dataset-common.sh
dataset_setup "import pretty_midi, fluidsynth, symusic, numpy" "numpy<2 pretty_midi pyfluidsynth symusic==0.5.8"
"$PY" -m pip install -q ./python >&2   # always this checkout's package (and its library)
exec "$PY" Benchmarks/python-peers.py --font "$FONT" --carillon "$CARILLON" "$@"
