#!/usr/bin/env bash
# Renders the 31 openmsx songs the ways the render code paths differ, into
# one folder, so a refactor can be checked byte for byte against the same
# renders made before it (the check is `compare`, below):
#
#   threads1  --threads 1 --jobs 2, --labels, --manifest (WAV; the manifest
#             measures loudness, so that path runs too)
#   threads2  --threads 2 --jobs 1 (a pool of two synths per piece)
#   stems     --stems --stems-by program (stem files and NAME.stems.json), --labels
#   flac      --format flac --bits 24
#
#   Tests/Render/reference-renders.sh render CARILLON OUT    # e.g. .build/debug/carillon /work/ref-render
#   Tests/Render/reference-renders.sh compare BEFORE AFTER  # cmp every file; manifests without timing fields
#   FONT=…/FluidR3_GM.sf2 RATE=44100 Tests/Render/reference-renders.sh render …   # slower, the same paths
#
# A font and songs are the system's (fluid-soundfont-gm, openttd-openmsx).
set -euo pipefail

MIDI_DIR=${MIDI_DIR:-/usr/share/games/openttd/baseset/openmsx}
# Whole pieces (their ends, tails and dead air are paths too) at a low rate with the
# small GM font, so a debug build renders the four sets in minutes, not an hour.
FONT=${FONT:-/usr/share/sounds/sf2/TimGM6mb.sf2}
RATE=${RATE:-16000}

render() {
    local carillon out=$2
    carillon=$(realpath "$1")
    rm -rf "$out"; mkdir -p "$out"
    # Paths relative to OUT, so the reports' and manifests' paths do not depend on where it is.
    cd "$out"
    local common=("$MIDI_DIR" --soundfont "$FONT" -r "$RATE" -q)
    "$carillon" render "${common[@]}" --output-dir threads1 --threads 1 --jobs 2 --labels --manifest threads1.jsonl
    "$carillon" render "${common[@]}" --output-dir threads2 --threads 2 --jobs 1
    "$carillon" render "${common[@]}" --output-dir stems --threads 1 --jobs 2 --stems stems-files --stems-by program --labels
    "$carillon" render "${common[@]}" --output-dir flac --threads 1 --jobs 2 --format flac --bits 24
}

compare() {
    local before=$1 after=$2 differ=0 files=0
    # The same files on both sides.
    if ! diff <(cd "$before" && find . -type f ! -name '*.jsonl' ! -name '*.manifest.json' | sort) <(cd "$after" && find . -type f ! -name '*.jsonl' ! -name '*.manifest.json' | sort); then
        echo "FAIL: the file lists differ" >&2; differ=1
    fi
    while IFS= read -r f; do
        files=$((files + 1))
        [ -f "$after/$f" ] || continue
        cmp -s "$before/$f" "$after/$f" || { echo "differs: $f" >&2; differ=1; }
    done < <(cd "$before" && find . -type f ! -name '*.jsonl' ! -name '*.manifest.json' | sort)
    # A stems report names its stem files by path: the same folder name on each side.
    for m in "$before"/*.jsonl; do
        python3 - "$m" "$after/$(basename "$m")" "$before" "$after" <<'PY' || differ=1
import json, sys
timing = {"render_seconds", "carillon_version"}
def lines(path, root):
    out = {}
    for line in open(path):
        e = json.loads(line)
        for k in timing: e.pop(k, None)
        out[e["input"]] = json.loads(json.dumps(e).replace(root, "ROOT"))
    return out
a, b = lines(sys.argv[1], sys.argv[3]), lines(sys.argv[2], sys.argv[4])
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k): print(f"manifest line differs: {k}\n  {a.get(k)}\n  {b.get(k)}", file=sys.stderr)
    sys.exit(1)
print(f"{sys.argv[2]}: {len(a)} manifest lines equal apart from render_seconds and carillon_version")
PY
    done
    # Each rendering's own manifest line (NAME.manifest.json, newer builds) is its line in the manifest.
    while IFS= read -r f; do
        grep -qxF -- "$(cat "$f")" "$after/threads1.jsonl" || { echo "not in the manifest: $f" >&2; differ=1; }
    done < <(find "$after" -name '*.manifest.json')
    [ "$differ" = 0 ] || { echo "FAIL: renders differ" >&2; exit 1; }
    echo "$files files cmp-equal"
}

case "${1:-}" in
    render) render "$2" "$3" ;;
    compare) compare "$2" "$3" ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
