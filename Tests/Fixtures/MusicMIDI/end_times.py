"""pretty_midi's end time of each MIDI file beside this script, as `name<TAB>seconds`.

    .build/labels-venv/bin/python Tests/Fixtures/MusicMIDI/end_times.py > Tests/Fixtures/MusicMIDI/end-times.tsv
"""
import pathlib
import warnings

import pretty_midi

warnings.filterwarnings("ignore")   # pretty_midi warns about tempo events off track 0
for path in sorted(pathlib.Path(__file__).parent.glob("*.mid")):
    print(f"{path.name}\t{pretty_midi.PrettyMIDI(str(path)).get_end_time():.6f}")
