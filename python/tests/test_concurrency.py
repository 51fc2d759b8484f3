"""Threads and processes: the GIL released while rendering, one Renderer from
several threads, fork and spawn pools, no leak over 1,000 renders."""
import multiprocessing
import threading
import time

import numpy as np

import carillon
from conftest import FONT, OPENMSX, RATE, SHORT

FILES = OPENMSX[:4]


def test_another_thread_runs_while_one_renders(renderer):
    counted = [0]
    rendering = threading.Event()
    done = threading.Event()

    def count():
        rendering.wait()
        while not done.is_set():
            counted[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    # One render alone, then with the counter spinning: a render holding the GIL would let it count
    # only at the switch interval's few handovers (5 ms each), and would take the counter's time too.
    start = time.perf_counter()
    renderer.render(FILES[0])
    alone = time.perf_counter() - start
    rendering.set()
    start = time.perf_counter()
    before = counted[0]
    renderer.render(FILES[0])
    during = counted[0] - before
    elapsed = time.perf_counter() - start
    done.set()
    counter.join()
    # A Python loop counts millions a second; holding the GIL it would get ~1 switch interval in 5 ms.
    assert during > 100_000, (during, elapsed)
    print(f"counted {during} while rendering for {elapsed:.2f} s (alone {alone:.2f} s)")


def test_one_renderer_from_several_threads_gives_each_file_its_own_bytes(renderer):
    serial = [renderer.render(f).audio for f in FILES]
    results = [None] * (2 * len(FILES))

    def work(i):
        results[i] = renderer.render(FILES[i % len(FILES)]).audio

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, audio in enumerate(results):
        assert np.array_equal(audio, serial[i % len(FILES)])


def _render(path):
    return carillon.render(path, soundfont=FONT, sample_rate=RATE, **SHORT)


def test_fork_and_spawn_pools_give_the_same_arrays(renderer):
    serial = [renderer.render(f).audio for f in FILES]
    _render(FILES[0])   # a renderer cached in this process before the fork: the children make their own
    for method in ("fork", "spawn"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            pooled = pool.map(_render, FILES)
        for a, b in zip(pooled, serial):
            assert np.array_equal(a, b), method


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _tiny_midi():
    """One track: a few notes on two channels, a second long."""
    events = bytearray()
    for i, note in enumerate((60, 64, 67, 72)):
        events += bytes([0x00, 0x90, note, 100, 0x60, 0x80, note, 0])
        events += bytes([0x00, 0x99, 36 + i, 90, 0x10, 0x89, 36 + i, 0])
    events += bytes([0x00, 0xFF, 0x2F, 0x00])
    return b"MThd" + (6).to_bytes(4, "big") + bytes([0, 0, 0, 1, 0, 96]) + b"MTrk" + len(events).to_bytes(4, "big") + events


def test_rss_after_1000_renders_within_5_mib_of_after_10():
    midi = _tiny_midi()
    r = carillon.Renderer(FONT, sample_rate=8000, labels=True, tail=0.5)
    for _ in range(10):
        r.render(midi)
    after10 = _rss_kib()
    for _ in range(990):
        r.render(midi)
    after1000 = _rss_kib()
    print(f"RSS after 10 renders {after10} KiB, after 1000 {after1000} KiB")
    assert after1000 - after10 < 5 * 1024


_inherited = None


def _render_inherited(path):
    return _inherited.render(path).audio


def test_a_renderer_made_before_a_fork_renders_in_the_children(renderer):
    # A DataLoader-style pool whose dataset made its Renderer in the parent.
    global _inherited
    _inherited = carillon.Renderer(FONT, sample_rate=RATE, **SHORT)
    serial = [renderer.render(f).audio for f in FILES[:2]]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pooled = pool.map(_render_inherited, FILES[:2])
    for a, b in zip(pooled, serial):
        assert np.array_equal(a, b)
