"""The symusic peer of Benchmarks/inspect.sh: what a symusic user runs to summarise a file.

Usage: inspect_peer.py FILE [second|tick]
Loads the file with symusic (C++ parser) and prints the same summary: tracks,
notes, duration. `second` (default) converts times to seconds, as `carillon
inspect` shows them; `tick` loads in ticks (symusic's cheapest load) and prints
the duration in ticks.
"""
import sys

import symusic

ttype = sys.argv[2] if len(sys.argv) > 2 else "second"
score = symusic.Score(sys.argv[1], ttype=ttype)
notes = sum(len(t.notes) for t in score.tracks)
print(f"Tracks:    {len(score.tracks)}")
print(f"Notes:     {notes}")
print(f"Duration:  {score.end():.3f} s" if ttype == "second" else f"Duration:  {score.end()} ticks")
