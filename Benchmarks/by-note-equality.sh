#!/usr/bin/env bash
# Check (on demand, not in scripts/test): a font loaded by note renders every
# openmsx file byte for byte as the font loaded whole, in a release build (the
# debug test `sf3_everyOpenmsxPiece` takes hours on a loaded machine). One line
# per file; exits 1 if any file differs or is silent.
#
#   Benchmarks/by-note-equality.sh                  # MuseScore_General_Lite.sf3, all 31 files
#   FONT=/usr/share/sounds/sf3/FluidR3Mono_GM.sf3 Benchmarks/by-note-equality.sh
#   FILES="a.mid b.mid" SCRATCH=.build-release Benchmarks/by-note-equality.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=${SCRATCH:-.build}
FONT=${FONT:-/usr/share/sounds/sf3/MuseScore_General_Lite.sf3}
MIDI_DIR=${MIDI_DIR:-/usr/share/games/openttd/baseset/openmsx}
FILES=${FILES:-$(ls "$MIDI_DIR"/*.mid)}

swift build -c release --product CarillonBench --scratch-path "$SCRATCH" >&2
# shellcheck disable=SC2086  # FILES is a list of paths
"$SCRATCH/release/CarillonBench" by-note-equality "$FONT" $FILES
