#!/usr/bin/env bash
# Standard MIDI File parse throughput: Carillon vs symusic (C++) vs mido (Python),
# on one deterministic file of ~1,000,000 notes, in one run. Not a test.
#   Benchmarks/parse.sh [RUNS]     (default 15; mido runs RUNS/5 times)
# Everything it makes goes under bench-out/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-15}"
out=bench-out
mkdir -p "$out"

echo "== building CarillonBench (release)" >&2
swift build -c release --scratch-path .build-smf --product CarillonBench 2>&1 | grep -E "error|Compiling|Build" >&2 || true
bench=.build-smf/release/CarillonBench
[ -x "$bench" ] || { echo "error: $bench was not built" >&2; exit 1; }

if [ ! -x "$out/venv/bin/python" ]; then
    echo "== creating $out/venv with symusic and mido from PyPI" >&2
    python3 -m venv "$out/venv"
fi
"$out/venv/bin/python" -c "import symusic, mido" 2>/dev/null || "$out/venv/bin/pip" install -q symusic mido >&2

file="$out/million-notes.mid"
[ -f "$file" ] || "$bench" generate-smf "$file" 1000000 >&2

echo "== parsing $file ($(stat -c %s "$file") bytes), median of $runs runs" >&2
results=$( { "$bench" parse "$file" "$runs"; "$out/venv/bin/python" Benchmarks/parse_peers.py "$file" "$runs"; } )
echo "$results" > "$out/parse-results.txt"

symusic_time=$(awk '$1 == "symusic" { print $2 }' <<<"$results")
carillon_events=$(awk '$1 == "carillon-parse" { print $3 }' <<<"$results")
printf '\n%-26s %10s %10s %14s %16s\n' parser "median ms" "MB/s" "Mevents/s" "speed vs symusic"
awk -v sym="$symusic_time" -v ev="$carillon_events" '{
    printf "%-26s %10.1f %10.1f %14.2f %15.2fx\n", $1, $2 * 1000, $4 / $2 / 1e6, ev / $2 / 1e6, sym / $2
}' <<<"$results"
echo
echo "events/s counts the file's $carillon_events events (as Carillon reads them) for every parser;"
echo "machine: $(nproc) cores, $(uname -m); $(swift --version 2>/dev/null | head -1)"
echo "symusic $("$out/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("symusic"))'), mido $("$out/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mido"))')"
