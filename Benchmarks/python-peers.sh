#!/usr/bin/env bash
# The Python package against pretty_midi's fluidsynth(), symusic and the CLI batch, side by side
# in one run (Benchmarks/python-peers.py): wall time, files/s, peak memory and fidelity (the render
# round's env_r against fluidsynth), in a venv this script makes (bench-out/dataset-venv).
#   Benchmarks/python-peers.sh [--only NAME,NAME] [--no-fidelity | --no-timing] [--chunk N] [--file-timeout S] [FOLDER|FILE...]
# Default: the 31 openmsx songs, and the benchmark's own corpus (112 freedoom songs) in
# bench-out/corpus/freedoom, fetched there first by Benchmarks/python-peers-corpus.sh if missing.
#   FONT=… CARILLON=path/to/carillon CARILLON_BUILD_FLAGS="…" (the library's build, as scripts/test's)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=Benchmarks/dataset-common.sh
source Benchmarks/dataset-common.sh
dataset_setup "import pretty_midi, fluidsynth, symusic, numpy, mido, scipy, soundfile" \
    "numpy<2 pretty_midi pyfluidsynth symusic==0.5.8 mido scipy soundfile"
"$PY" -m pip install -q ./python >&2   # always this checkout's package (and its library)
sets=() value=0   # the folders and files given (not an option nor an option's value)
for a in "$@"; do
    if [ $value = 1 ]; then value=0
    elif [[ $a == --only || $a == --chunk || $a == --file-timeout || $a == --scratch || $a == --font || $a == --carillon ]]; then value=1
    elif [[ $a != -* ]]; then sets+=("$a"); fi
done
if [ ${#sets[@]} -eq 0 ]; then
    corpus=bench-out/corpus/freedoom
    [ -f "$corpus/SOURCES.txt" ] || Benchmarks/python-peers-corpus.sh "$corpus" >&2
    set -- "$@" /usr/share/games/openttd/baseset/openmsx "$corpus"
fi
exec "$PY" Benchmarks/python-peers.py --font "$FONT" --carillon "$CARILLON" "$@"
