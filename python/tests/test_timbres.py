"""timbres=: each track's instrument drawn, as `carillon render --timbres` draws it."""
import json
from pathlib import Path

import numpy as np
import pytest

import carillon
from conftest import FONT, OPENMSX, RATE, cli, float_wav

# Two string tracks (4 and 5) and a drum track.
SONG = next(p for p in OPENMSX if p.endswith("/harp_harmony.mid"))


def _cli_render(tmp_path, *flags):
    out = tmp_path / "out.wav"
    cli("render", SONG, "-o", out, "--bits", "32", "-r", RATE, "--soundfont", FONT, "--threads", 1, "--max-duration", 6,
        "--labels", "--manifest", tmp_path / "m.jsonl", "-q", *flags)
    line = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    return float_wav(out), (tmp_path / "out.notes.csv").read_text(), line


def test_per_track_equals_the_cli_samples_labels_and_draws(tmp_path):
    wav, notes, line = _cli_render(tmp_path, "--timbres", "per-track", "--seed", 5)
    result = carillon.Renderer(FONT, sample_rate=RATE, max_duration=6.0, labels=True,
                               timbres="per-track", seed=5).render(SONG)
    assert result.audio.tobytes() == wav
    assert np.array_equal(result.labels, carillon._labels(notes))
    assert result.timbres == line["timbres"] and len(result.timbres) >= 4
    # Each note's label names the preset its track drew.
    drawn = {(p["track"], p["bank"], p["program"], p["preset"]) for p in result.timbres}
    for row in result.labels:
        assert (int(row["track"]), int(row["bank"]), int(row["program"]), str(row["preset"])) in drawn
    # Another seed draws otherwise; the same seed again, the same samples.
    other = carillon.Renderer(FONT, sample_rate=RATE, max_duration=6.0, timbres="per-track", seed=6).render(SONG)
    assert other.timbres != result.timbres and not np.array_equal(other.audio, result.audio)
    again = carillon.Renderer(FONT, sample_rate=RATE, max_duration=6.0, timbres="per-track", seed=5).render(SONG)
    assert again.audio.tobytes() == wav and again.timbres == result.timbres


def test_a_pool_as_a_dict_equals_the_cli_with_the_pool_file(tmp_path):
    pool = {"strings": [40, "0:41"], "drums": [0, 8]}
    (tmp_path / "pool.json").write_text(json.dumps(pool))
    wav, _, line = _cli_render(tmp_path, "--timbres", tmp_path / "pool.json", "--seed", 2)
    result = carillon.Renderer(FONT, sample_rate=RATE, max_duration=6.0, timbres=pool, seed=2).render(SONG)
    assert result.audio.tobytes() == wav
    assert result.timbres == line["timbres"]
    assert all(p["program"] in (40, 41) for p in result.timbres if p["class"] == "Strings")
    # The file itself, by path, is the same pool.
    by_path = carillon.Renderer(FONT, sample_rate=RATE, max_duration=6.0, timbres=tmp_path / "pool.json", seed=2).render(SONG)
    assert by_path.audio.tobytes() == wav


def test_pool_mistakes_are_option_errors_naming_the_place(tmp_path):
    (tmp_path / "pool.yaml").write_text("drums: [0]\nstrngs: [1]\n")
    with pytest.raises(carillon.OptionError, match=r"pool.yaml:2:1: error: 'strngs' is no General MIDI class"):
        carillon.Renderer(FONT, timbres=tmp_path / "pool.yaml")
    with pytest.raises(carillon.OptionError, match=r"program 200 is out of range"):
        carillon.Renderer(FONT, timbres={"piano": [200]})
    with pytest.raises(carillon.OptionError, match=r"cannot read the timbre pool"):
        carillon.Renderer(FONT, timbres=str(tmp_path / "none.yaml"))


FLUIDR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"


def test_pool_presets_in_none_of_the_fonts_are_option_errors_at_their_place(tmp_path):
    # TimGM6mb has no bank 8: 8:4 is in none of the fonts, checked when the Renderer reads them.
    (tmp_path / "pool.yaml").write_text('drums: [0]\npiano: [0, "8:4"]\n')
    with pytest.raises(carillon.OptionError,
                       match=r'pool.yaml:2:12: error: preset 8:4 is in none of the fonts \(TimGM6mb.sf2\); did you mean 0:4 \('):
        carillon.Renderer(FONT, timbres=tmp_path / "pool.yaml")
    with pytest.raises(carillon.OptionError, match=r"timbres:1:\d+: error: preset 128:99 is in none of the fonts"):
        carillon.Renderer(FONT, timbres={"drums": [99]})
    # FluidR3_GM has 8:4: in a set with it, the pool is good.
    if Path(FLUIDR3).exists():
        carillon.Renderer([FONT, FLUIDR3], timbres=tmp_path / "pool.yaml")


def test_a_set_draws_each_track_across_its_fonts_and_the_labels_name_each_notes_font(tmp_path):
    """With several fonts, a track draws among the presets of its class in all of them (the CLI's
    --soundfont A --soundfont B --timbres): for some seed the two string tracks play presets of two
    fonts; each note's label names its track's font and preset; a rerun gives the same bytes."""
    if not Path(FLUIDR3).exists():
        pytest.skip("fluid-soundfont-gm is not installed")
    fonts = [FONT, FLUIDR3]
    options = dict(sample_rate=RATE, max_duration=6.0, labels=True, timbres="per-track", threads=1)
    for seed in range(1, 40):
        result = carillon.Renderer(fonts, seed=seed, **options).render(SONG)
        # The string tracks (4 and 5) start after 6 s: the notes of the first 6 s (organ, drums) name the fonts.
        strings = [p for p in result.timbres if p["class"] == "Strings"]
        if len({p["soundfont"] for p in strings}) == 2 and len({str(r["soundfont"]) for r in result.labels}) == 2:
            break
    else:
        pytest.fail("no seed in 1...39 drew the two string tracks from two fonts with notes of both fonts in 6 s")
    drawn = {(p["track"], p["soundfont"], p["bank"], p["program"], p["preset"]) for p in result.timbres}
    for row in result.labels:
        key = (int(row["track"]), str(row["soundfont"]), int(row["bank"]), int(row["program"]), str(row["preset"]))
        assert key in drawn, key
    assert {str(r["soundfont"]) for r in result.labels} <= {"TimGM6mb.sf2", "FluidR3_GM.sf2"}
    again = carillon.Renderer(fonts, seed=seed, **options).render(SONG)
    assert again.audio.tobytes() == result.audio.tobytes() and again.timbres == result.timbres
    # The CLI, with the same fonts and seed, writes the same samples and draws.
    wav, _, line = _cli_render(tmp_path, "--soundfont", FLUIDR3, "--timbres", "per-track", "--seed", seed)
    assert wav == result.audio.tobytes() and line["timbres"] == result.timbres
