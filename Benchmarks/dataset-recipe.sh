#!/usr/bin/env bash
# docs/datasets.md's recipe, timed: a corpus folder to a Hugging Face
# audiofolder (audio, stems, labels, metadata), then loaded with `datasets`.
#   Benchmarks/dataset-recipe.sh CORPUS_DIR      # CARILLON=path SAMPLE=100 FONT=... JOBS=2
# The sample is Benchmarks/dataset-render.sh's (the SAMPLE shortest files by
# pretty_midi). pandas and datasets go into bench-out/dataset-venv from PyPI.
# The dataset is written to bench-out/dataset-recipe/data (kept; remove it by hand).
set -euo pipefail
CORPUS=$(realpath "$1")
cd "$(dirname "$0")/.."
. Benchmarks/dataset-common.sh
dataset_setup "import pretty_midi, pandas, datasets" "pretty_midi pandas datasets"
out=bench-out/dataset-recipe
rm -rf "$out"; mkdir -p "$out/corpus"
dataset_sample "$CORPUS" "$out/list"
while read -r f; do
    rel=${f#"$CORPUS"/}; mkdir -p "$out/corpus/$(dirname "$rel")"; ln -s "$(realpath "$f")" "$out/corpus/$rel"
done < "$out/list"
cd "$out"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(wc -l < list) files; font $FONT"
step() { echo "\$ ${*}"; /usr/bin/time -f '  %e s wall, %M KiB peak' "$@"; }
step "$CARILLON" render corpus/ --output-dir data/audio --format flac \
    --labels --stems data/stems --manifest data/manifest.jsonl --jobs "$JOBS" --soundfont "$FONT" -q
step "$PY" ../../Benchmarks/dataset_metadata.py data
# datasets 5.2's audiofolder encodes audio through torchcodec (torch), not
# installed here: the metadata is loaded as the table audiofolder would join.
step "$PY" -c '
import datasets
ds = datasets.load_dataset("json", data_files="data/metadata.jsonl", split="train")
print(ds)
print(ds.features)'
du -sh data/audio data/stems data/metadata.jsonl
