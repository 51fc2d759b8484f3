"""1,000 damaged byte strings: each renders what the reader salvages or raises
carillon.MIDIError; none crashes or hangs the interpreter."""
import random
from pathlib import Path

import carillon
from conftest import DAMAGED, FONT, OPENMSX


def _cases(seed=20261128, count=1000):
    rng = random.Random(seed)
    seeds = [Path(f).read_bytes() for f in OPENMSX[:8] + DAMAGED]
    for i in range(count):
        base = bytearray(rng.choice(seeds))
        kind = i % 5
        if kind == 0:      # random bytes, some behind a valid header
            data = bytearray(rng.randbytes(rng.randrange(0, 200)))
            if rng.random() < 0.5:
                data = bytearray(base[:22]) + data
        elif kind == 1:    # cut short anywhere
            data = base[:rng.randrange(0, len(base))]
        elif kind == 2:    # bytes flipped
            data = base
            for _ in range(rng.randrange(1, 40)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 3:    # a chunk length or the header's fields overwritten
            data = base
            at = rng.choice([4, 8, 10, 12, 18, 19, 20, 21])
            data[at:at + 4] = rng.randbytes(4)
        else:              # a slice spliced elsewhere
            data = base
            a, b = sorted(rng.randrange(len(data)) for _ in range(2))
            at = rng.randrange(len(data))
            data[at:at] = data[a:b]
        yield bytes(data)


def test_1000_fuzzed_byte_strings_raise_or_render():
    # 8 kHz, 2 s at most, no tail: damage that stretches time is cut short.
    r = carillon.Renderer(FONT, sample_rate=8000, max_duration=2.0, tail=0.0)
    rendered = raised = 0
    for data in _cases():
        try:
            result = r.render(data)
            assert result.audio.shape[1] == 2 and result.duration <= 2.0 + 0.1
            rendered += 1
        except carillon.MIDIError as e:
            assert str(e)
            raised += 1
    print(f"{rendered} rendered, {raised} raised MIDIError")
    assert rendered + raised == 1000 and raised >= 150
