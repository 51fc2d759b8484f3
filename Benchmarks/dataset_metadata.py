"""docs/datasets.md's last step: metadata.jsonl for Hugging Face's audiofolder.

    python dataset_metadata.py DATA_DIR

Reads DATA_DIR/manifest.jsonl (`carillon render --manifest`) and each rendered
file's NAME.notes.csv, and writes DATA_DIR/metadata.jsonl: one line per audio
file, `file_name` relative to DATA_DIR, its notes as columns of lists, its
length and its SoundFont. The same code as the docs' block.
"""
import json
import pathlib
import sys

import pandas as pd

root = pathlib.Path(sys.argv[1])
manifest = pd.read_json(root / "manifest.jsonl", lines=True)
rows = []
for entry in manifest[manifest.status == "ok"].itertuples():
    audio = pathlib.Path(entry.output)
    notes = pd.read_csv(audio.with_suffix(".notes.csv"))
    rows.append({"file_name": str(audio.relative_to(root)), "notes": notes.to_dict("list"),
                 "seconds": entry.rendered_seconds, "soundfont": entry.soundfont})
with open(root / "metadata.jsonl", "w") as f:
    for row in rows:
        f.write(json.dumps(row) + "\n")
print(f"{len(rows)} rows, {sum(len(r['notes']['onset']) for r in rows)} notes")
