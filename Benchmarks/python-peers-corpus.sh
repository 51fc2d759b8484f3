#!/usr/bin/env bash
# The python-peers benchmark's own corpus (issue 39), beside the 31 openmsx songs: the 112
# Standard MIDI Files of freedoom/freedoom's musics/ at d14dbbee3b6fbfb2c11cdb65eb61216e86d4ee85
# (2026-06-22), Freedoom's level music for a General MIDI band with drums, written by its
# contributors (CREDITS-MUSIC there), BSD-3-Clause (COPYING.adoc there). Not in git (4.1 MB):
# this script puts it in DIR and checks the count; SOURCES.txt beside the songs says where from.
#   Benchmarks/python-peers-corpus.sh DIR [GIT_DIR]
# GIT_DIR: a clone or mirror of freedoom/freedoom holding that commit (else one is cloned from GitHub).
set -euo pipefail
dir=${1:?"usage: $0 DIR [GIT_DIR]"}
commit=d14dbbee3b6fbfb2c11cdb65eb61216e86d4ee85
git_dir=${2:-}
if [ -z "$git_dir" ]; then
    git_dir=$(mktemp -d)/freedoom.git
    trap 'rm -rf "$(dirname "$git_dir")"' EXIT
    git clone -q --bare --filter=blob:none https://github.com/freedoom/freedoom "$git_dir"
fi
mkdir -p "$dir"
git --git-dir="$git_dir" archive "$commit" musics | tar -x -C "$dir" --strip-components=1
count=$(find "$dir" -maxdepth 1 -iname '*.mid' | wc -l)
[ "$count" -eq 112 ] || { echo "$dir: $count MIDI files, expected 112 from $commit" >&2; exit 1; }
find "$dir" -maxdepth 1 -type f ! -iname '*.mid' -delete
cat > "$dir/SOURCES.txt" <<TEXT
freedoom/freedoom musics/*.mid at $commit (https://github.com/freedoom/freedoom)
Freedoom level music, General MIDI; BSD-3-Clause (COPYING.adoc of that commit); authors in CREDITS-MUSIC.
TEXT
echo "$dir: $count songs from freedoom/freedoom $commit"
