"""The Python peers of Benchmarks/dataset-render.sh: the usual ways a dataset
script renders MIDI files to WAV, over a list of files with a pool of workers.

    python dataset_render.py pretty_midi|midi2audio FONT RATE JOBS OUT_DIR LIST_FILE
    python dataset_render.py select N < paths      # the N shortest that pretty_midi reads

pretty_midi: `pretty_midi.PrettyMIDI(path).fluidsynth(fs=RATE, sf2_path=FONT)`
(pyfluidsynth: a synth per instrument, the font loaded for each), written with
`soundfile.write` as 16-bit WAV; the note list (what a dataset's labels come
from) is pretty_midi's own.
midi2audio: `FluidSynth(FONT, RATE).midi_to_audio(path, wav)`, which runs
`fluidsynth -ni FONT path -F wav -r RATE` once per file.

Prints "ok N failed M"; a file that fails is counted, not fatal.
"""
import multiprocessing
import pathlib
import sys
import warnings


def render(args):
    tool, font, rate, out, index, path = args
    wav = str(pathlib.Path(out) / f"{index:04d}_{pathlib.Path(path).stem}.wav")
    try:
        if tool == "pretty_midi":
            warnings.filterwarnings("ignore")
            import pretty_midi
            import soundfile
            pm = pretty_midi.PrettyMIDI(path)
            audio = pm.fluidsynth(fs=rate, sf2_path=font)
            soundfile.write(wav, audio, rate, subtype="PCM_16")
        else:
            from midi2audio import FluidSynth
            FluidSynth(sound_font=font, sample_rate=rate).midi_to_audio(path, wav)
            if not pathlib.Path(wav).exists():
                raise RuntimeError("no output")
        return True
    except Exception as e:
        print(f"{tool}: {path}: {type(e).__name__}: {e}", file=sys.stderr)
        return False


def select(n):
    """The N shortest files by pretty_midi's end time (ties by path), of those it reads."""
    warnings.filterwarnings("ignore")
    import pretty_midi
    timed = []
    for path in sorted(line for line in sys.stdin.read().splitlines() if line):
        try:
            timed.append((pretty_midi.PrettyMIDI(path).get_end_time(), path))
        except Exception:
            pass
    for _, path in sorted(timed)[:n]:
        print(path)


def main():
    if sys.argv[1] == "select":
        return select(int(sys.argv[2]))
    tool, font, rate, jobs, out, list_file = sys.argv[1:7]
    paths = [line for line in open(list_file).read().splitlines() if line]
    work = [(tool, font, int(rate), out, i, p) for i, p in enumerate(paths)]
    with multiprocessing.Pool(int(jobs)) as pool:
        results = list(pool.imap_unordered(render, work, chunksize=1))
    print(f"ok {sum(results)} failed {len(results) - sum(results)}")


if __name__ == "__main__":
    main()
