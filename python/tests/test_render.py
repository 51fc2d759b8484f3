"""carillon.render and Renderer against the CLI: every input kind, the same
samples as `carillon render --bits 32`, the labels of notes.csv, the manifest's facts."""
import io
import json
from pathlib import Path

import numpy as np
import pytest

import carillon
from conftest import DAMAGED, FONT, OPENMSX, RATE, SHORT, cli, float_wav

FILE = OPENMSX[0]


def test_every_input_kind_gives_the_same_array(renderer, tmp_path):
    data = Path(FILE).read_bytes()
    by_path = renderer.render(FILE).audio
    assert by_path.dtype == np.float32 and by_path.ndim == 2 and by_path.shape[1] == 2
    assert by_path.shape[0] > RATE and np.abs(by_path).max() > 0.01
    # The key (which draws augmentation and picks a font) is the file's name for a path: pass it for the rest.
    key = Path(FILE).name
    assert np.array_equal(renderer.render(Path(FILE)).audio, by_path)
    assert np.array_equal(renderer.render(data, key=key).audio, by_path)
    assert np.array_equal(renderer.render(bytearray(data), key=key).audio, by_path)
    with open(FILE, "rb") as f:
        assert np.array_equal(renderer.render(f).audio, by_path)
    assert np.array_equal(renderer.render(io.BytesIO(data), key=key).audio, by_path)
    assert np.array_equal(carillon.render(FILE, soundfont=FONT, sample_rate=RATE, **SHORT), by_path)


@pytest.mark.parametrize("library", ["mido", "pretty_midi", "symusic"])
def test_midi_library_objects_go_through_their_own_writer(renderer, library):
    lib = pytest.importorskip(library)
    if library == "mido":
        score = lib.MidiFile(FILE)
        buffer = io.BytesIO(); score.save(file=buffer)
    elif library == "pretty_midi":
        score = lib.PrettyMIDI(FILE)
        buffer = io.BytesIO(); score.write(buffer)
    else:
        score = lib.Score(FILE)
        buffer = io.BytesIO(score.dumps_midi())
    audio = renderer.render(score).audio
    assert audio.shape[0] > RATE and np.abs(audio).max() > 0.01
    assert np.array_equal(audio, renderer.render(buffer.getvalue()).audio)


CASES = [
    (OPENMSX[1], {}),
    (OPENMSX[2], {"transpose": "-3..3", "seed": 11, "velocity_scale": 0.8, "gain": 0.5}),
    (OPENMSX[3], {"tempo": 1.25, "reverb": False, "chorus_level": 4.0}),
    (OPENMSX[4], {"threads": 2}),
    (DAMAGED[0], {"no_limit": True, "max_duration": 15.0, "tail": 1.0}),
]


def _flags(options):
    flags = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + name.replace("_", "-"))
        else:
            flags += [flag, str(value)]
    return flags


@pytest.mark.parametrize("midi,options", CASES, ids=[Path(c[0]).name for c in CASES])
def test_samples_equal_the_cli_float_wav_byte_for_byte(midi, options, tmp_path):
    options = {**SHORT, **options}
    threads = options.pop("threads", 1)
    out = tmp_path / "out.wav"
    cli("render", midi, "-o", out, "--bits", "32", "-r", RATE, "--soundfont", FONT, "--threads", threads,
        "--labels", "--manifest", tmp_path / "m.jsonl", "-q", *_flags(options))
    result = carillon.Renderer(FONT, sample_rate=RATE, threads=threads, labels=True, loudness=True, **options).render(midi)
    wav = float_wav(out)
    assert len(wav) == result.audio.nbytes
    assert result.audio.tobytes() == wav
    # The labels are notes.csv, row for row.
    notes = (tmp_path / "out.notes.csv").read_text()
    assert np.array_equal(result.labels, carillon._labels(notes))
    assert len(result.labels) == notes.count("\n") - 1
    # The facts are the manifest line's (but for where it went and how long it took).
    line = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    for field in ("piece_seconds", "rendered_seconds", "peak_dbfs", "clipped_samples", "loudness_lufs", "limits",
                  "limit_seconds_cut", "dead_air_seconds", "gaps_cut", "seconds_cut", "truncated", "warnings", "augment"):
        assert result.facts.get(field) == line.get(field), field


def test_the_audio_is_the_results_own_samples_and_outlives_the_renderer():
    """No copy: the array is made on the library's samples, which live as long as it does."""
    renderer = carillon.Renderer(FONT, sample_rate=RATE, max_duration=4.0)
    first, second = renderer.render(FILE).audio, renderer.render(OPENMSX[1]).audio
    assert not first.flags.owndata and isinstance(first.base, carillon._ResultSamples)
    assert first.flags.c_contiguous and first.dtype == np.float32
    kept = first.copy()
    renderer.close()
    del renderer, second   # the second result freed, the first still held
    churn = [np.full(1 << 16, 7.0, np.float32) for _ in range(64)]   # memory freed early would be reused here
    assert np.array_equal(first, kept) and len(churn) == 64


def test_labels_have_the_columns_of_notes_csv(renderer):
    result = carillon.Renderer(FONT, sample_rate=RATE, labels=True, **SHORT).render(FILE)
    assert result.labels.dtype.names == ("onset", "offset", "pitch", "velocity", "channel", "program", "bank",
                                         "preset", "track", "track_name", "drum", "stem", "soundfont")
    assert len(result.labels) > 10 and (result.labels["offset"] >= result.labels["onset"]).all()
    assert renderer.render(FILE).labels is None   # only when asked, as --labels


def test_a_damaged_file_says_what_the_reader_salvaged(tmp_path):
    # WC2_13.MID: every track's last note message lacks a byte.
    damaged = next(f for f in DAMAGED if f.endswith("WC2_13.MID"))
    result = carillon.Renderer(FONT, sample_rate=RATE, **SHORT).render(damaged)
    assert result.warnings and all("byte" in w for w in result.warnings)
    run = cli("render", damaged, "-o", tmp_path / "d.wav", "--soundfont", FONT, "-r", RATE,
              "--max-duration", 20, "--manifest", tmp_path / "m.jsonl")
    assert json.loads((tmp_path / "m.jsonl").read_text())["warnings"] == result.warnings
    assert result.warnings[0] in run.stderr   # render says it too now
    assert carillon.Renderer(FONT, sample_rate=RATE, **SHORT).render(FILE).warnings == []


def test_errors_are_exceptions_by_kind_with_the_cli_messages(tmp_path):
    with pytest.raises(carillon.MIDIError) as e:
        carillon.render(b"not a MIDI file", soundfont=FONT)
    assert "not a readable MIDI file" in str(e.value)
    garbage = tmp_path / "garbage.mid"
    garbage.write_bytes(b"MThd garbage")
    run = cli("render", garbage, "-o", tmp_path / "g.wav", "--soundfont", FONT, check=False)
    with pytest.raises(carillon.MIDIError) as e:
        carillon.render(garbage, soundfont=FONT)
    assert str(e.value) in run.stderr
    with pytest.raises(carillon.MIDIError, match="cannot read"):
        carillon.render(tmp_path / "missing.mid", soundfont=FONT)

    with pytest.raises(carillon.SoundFontError) as e:
        carillon.Renderer(tmp_path / "missing.sf2")
    run = cli("render", FILE, "-o", tmp_path / "x.wav", "--soundfont", tmp_path / "missing.sf2", check=False)
    assert str(e.value) in run.stderr
    not_a_font = tmp_path / "not-a-font.sf2"
    not_a_font.write_bytes(b"RIFF" + bytes(100))
    with pytest.raises(carillon.SoundFontError):
        carillon.Renderer(not_a_font)

    for options, flag in [({"transpose": "5..2"}, ["--transpose", "5..2"]), ({"gain": 11}, ["--gain", "11"]),
                          ({"tempo": 9}, ["--tempo", "9"]), ({"seed": 3}, ["--seed", "3"]),
                          ({"rate": 200}, ["-r", "200"]), ({"set": ["nothing.here=1"]}, ["--set", "nothing.here=1"])]:
        with pytest.raises(carillon.OptionError) as e:
            carillon.Renderer(FONT, **{k: v for k, v in options.items() if k != "rate"},
                              **({"sample_rate": options["rate"]} if "rate" in options else {}))
        run = cli("render", FILE, "-o", tmp_path / "x.wav", "--soundfont", FONT, *flag, check=False)
        assert run.returncode != 0 and str(e.value) in run.stderr, (options, str(e.value), run.stderr)
    with pytest.raises(carillon.OptionError, match="unknown option 'velocity'"):
        carillon.Renderer(FONT, velocity=2)
    with pytest.raises(carillon.OptionError, match="--output-dir does not apply"):
        carillon.Renderer(FONT, output_dir="x")
    with pytest.raises(carillon.OptionError, match="--gain takes a number"):
        carillon.Renderer(FONT, gain="loud")
    with pytest.raises(carillon.OptionError):
        carillon.render(12345, soundfont=FONT)
    assert issubclass(carillon.MIDIError, carillon.Error) and issubclass(carillon.OptionError, carillon.Error)


# Every check the CLI and the C ABI share (RenderOptionChecks): the same one-line message both ways.
SHARED_CHECKS = [
    ({"threads": 0}, ["--threads", "0"]), ({"block": 8}, ["--block", "8"]), ({"tail": -1}, ["--tail=-1"]),
    ({"silence": 1}, ["--silence", "1"]), ({"max_duration": 0}, ["--max-duration", "0"]), ({"max_gap": -1}, ["--max-gap=-1"]),
    ({"oscillator_channel": [17]}, ["--oscillator-channel", "17"]), ({"a4": 1000}, ["--a4", "1000"]),
    ({"reverb_level": 5}, ["--reverb-level", "5"]), ({"chorus_level": 50}, ["--chorus-level", "50"]),
    ({"set": ["master.gain"]}, ["--set", "master.gain"]), ({"set": ["master.gain=99"]}, ["--set", "master.gain=99"]),
    ({"take": True}, ["--take"]), ({"velocity_scale": "0..1"}, ["--velocity-scale", "0..1"]),
    ({"transpose": 60}, ["--transpose", "60"]), ({"program_map": ""}, ["--program-map", ""]),
    ({"timbres": ""}, ["--timbres", ""]), ({"timbres": "/nonexistent/pool.yaml"}, ["--timbres", "/nonexistent/pool.yaml"]),
]


@pytest.mark.parametrize("options,flags", SHARED_CHECKS, ids=[" ".join(f) for _, f in SHARED_CHECKS])
def test_every_shared_option_check_gives_the_cli_message(options, flags, tmp_path):
    with pytest.raises(carillon.OptionError) as e:
        carillon.Renderer(FONT, **options)
    run = cli("render", FILE, "-o", tmp_path / "x.wav", "--soundfont", FONT, *flags, check=False)
    assert run.returncode != 0 and str(e.value) in run.stderr, (str(e.value), run.stderr)
    assert not (tmp_path / "x.wav").exists()


def test_a_stream_is_the_render_in_bounded_chunks(renderer):
    whole = renderer.render(FILE)
    stream = renderer.stream(FILE, chunk_frames=4096)
    chunks = list(stream)
    assert all(c.shape == (4096, 2) for c in chunks[:-1]) and 0 < len(chunks[-1]) <= 4096
    assert np.concatenate(chunks).tobytes() == whole.audio.tobytes()
    assert stream.result.facts["rendered_seconds"] == whole.duration
    # Leaving early stops the render; the renderer goes on.
    with renderer.stream(FILE, chunk_frames=1024) as early:
        assert next(early).shape == (1024, 2)
    assert np.array_equal(renderer.render(FILE).audio, whole.audio)
    with pytest.raises(carillon.MIDIError):
        list(renderer.stream(b"garbage"))
    with pytest.raises(carillon.OptionError, match="threads=1"):
        list(carillon.Renderer(FONT, threads=2).stream(FILE))


def test_program_map_set_and_mapping_equal_the_cli(tmp_path):
    program_map = tmp_path / "map.yaml"
    program_map.write_text("0..7: 5\n24..31: 0\n")
    options = {"program_map": program_map, "set": ["master.gain=-6"], "max_duration": 10.0}
    out = tmp_path / "out.wav"
    cli("render", OPENMSX[5], "-o", out, "--bits", "32", "-r", RATE, "--soundfont", FONT, "--threads", 1, "-q",
        "--program-map", program_map, "--set", "master.gain=-6", "--max-duration", 10)
    result = carillon.Renderer(FONT, sample_rate=RATE, **options).render(OPENMSX[5])
    assert result.audio.tobytes() == float_wav(out)
    assert result.facts["augment"]["program_map"] == str(program_map)
    plain = carillon.Renderer(FONT, sample_rate=RATE, max_duration=10.0).render(OPENMSX[5])
    assert not np.array_equal(plain.audio, result.audio)   # the options did something


def test_a_take_through_a_mapping_plays_as_the_cli_plays_it(tmp_path):
    # The file played into the rig as the keyboard (--take): its zones split, layer and transpose.
    mapping = Path(__file__).resolve().parents[2] / "mappings/stage-piano.yaml"
    out = tmp_path / "out.wav"
    cli("render", OPENMSX[6], "-o", out, "--bits", "32", "-r", RATE, "--soundfont", FONT, "-q",
        "--mapping", mapping, "--take", "--max-duration", 10)
    result = carillon.Renderer(FONT, sample_rate=RATE, mapping=mapping, take=True, max_duration=10.0).render(OPENMSX[6])
    assert result.audio.tobytes() == float_wav(out)
    plain = carillon.Renderer(FONT, sample_rate=RATE, max_duration=10.0).render(OPENMSX[6])
    assert plain.audio.shape != result.audio.shape or not np.array_equal(plain.audio, result.audio)
