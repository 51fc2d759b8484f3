#!/usr/bin/env bash
# The stage soak (issue 40), not in CI: `carillon live -a jack` through mappings/stage-piano.yaml
# for SOAK_MINUTES (30) against jackd's dummy driver, with keys, pedal, scene switches and faders
# from a JACK MIDI client, OSC and a WebSocket client at once, and a fault every SOAK_SEGMENT
# seconds (180): the JACK server restarted, or the process stalled. See Benchmarks/soak.py.
#   Benchmarks/soak.sh [OUT]      (CARILLON_BIN: a folder with carillon and carillon-jack-probe;
#                                  unset: the release build, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out/soak}
for tool in jackd jack_lsp csvmidi python3; do
  command -v "$tool" >/dev/null || { echo "soak: $tool not found (scripts/setup installs jackd2 and midicsv)"; exit 1; }
done
if [[ -z ${CARILLON_BIN:-} ]]; then
  swift build -c release --product carillon >/dev/null && swift build -c release --product carillon-jack-probe >/dev/null
  CARILLON_BIN=$(swift build -c release --show-bin-path)
fi
exec python3 Benchmarks/soak.py --carillon "$CARILLON_BIN/carillon" --probe "$CARILLON_BIN/carillon-jack-probe" \
  --mapping mappings/stage-piano.yaml --soundfont "${SOAK_FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}" \
  --faults "${SOAK_FAULTS:-restart,stall}" --minutes "${SOAK_MINUTES:-30}" --segment "${SOAK_SEGMENT:-180}" --out "$out"
