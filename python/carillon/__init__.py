"""Carillon in Python: a score in, an array out.

Carillon's own offline render (the same samples as `carillon render`'s 32-bit
float WAV) runs in this process through libcarillonc.so; the GIL is released
while it renders.

    audio = carillon.render("song.mid", soundfont="TimGM6mb.sf2")   # float32, (frames, 2)

    renderer = carillon.Renderer("TimGM6mb.sf2", labels=True, transpose="-2..2", seed=7)
    result = renderer.render(pretty_midi_object)
    result.audio, result.labels, result.duration, result.warnings
"""
import csv
import hashlib
import io
import json
import os
import queue
import threading
from pathlib import Path

import numpy as np

from ._native import STREAM_CALLBACK as _STREAM_CALLBACK, lib as _lib, take_string as _take_string
from .errors import BY_KIND as _BY_KIND, Error, MIDIError, OptionError, RenderError, SoundFontError, _Stopped
import ctypes as _ctypes

__all__ = ["render", "Renderer", "Result", "Stream", "Error", "MIDIError", "SoundFontError", "OptionError", "RenderError",
           "midi_bytes"]
__version__ = "0.1.0"


def _raise(kind, message):
    text = _take_string(message.value) or "unknown failure"
    raise _BY_KIND.get(kind.value, Error)(text)


def midi_bytes(midi):
    """`midi` as (bytes, name, default key): a path, bytes, a binary file object, or a
    pretty_midi.PrettyMIDI, symusic.Score or mido.MidiFile through its own MIDI writer."""
    if isinstance(midi, (str, os.PathLike)):
        path = os.fspath(midi)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            # The CLI's message for a file it cannot read.
            raise MIDIError(f"cannot read {path}: {e.strerror or e}") from None
        return data, path, os.path.basename(path)
    if isinstance(midi, (bytes, bytearray, memoryview)):
        data = bytes(midi)
        return data, "<bytes>", hashlib.sha256(data).hexdigest()
    if hasattr(midi, "dumps_midi"):                                   # symusic.Score
        data = bytes(midi.dumps_midi())
        return data, "<symusic.Score>", hashlib.sha256(data).hexdigest()
    if hasattr(midi, "instruments") and hasattr(midi, "write"):       # pretty_midi.PrettyMIDI
        buffer = io.BytesIO()
        midi.write(buffer)
        data = buffer.getvalue()
        return data, "<pretty_midi.PrettyMIDI>", hashlib.sha256(data).hexdigest()
    if hasattr(midi, "tracks") and hasattr(midi, "save"):             # mido.MidiFile
        buffer = io.BytesIO()
        midi.save(file=buffer)
        data = buffer.getvalue()
        return data, "<mido.MidiFile>", hashlib.sha256(data).hexdigest()
    if hasattr(midi, "read"):                                         # a binary file object
        data = midi.read()
        if not isinstance(data, (bytes, bytearray)):
            raise OptionError("a file object for midi must be opened in binary mode ('rb')")
        name = getattr(midi, "name", None)
        name = name if isinstance(name, str) else "<file>"
        return bytes(data), name, os.path.basename(name) if name != "<file>" else hashlib.sha256(data).hexdigest()
    raise OptionError(f"midi must be a path, bytes, a binary file object, a pretty_midi.PrettyMIDI, a symusic.Score "
                      f"or a mido.MidiFile, not {type(midi).__name__}")


# notes.csv's columns (RenderLabels.noteColumns) and their numpy types.
_NOTE_TYPES = {"onset": "f8", "offset": "f8", "pitch": "i4", "velocity": "i4", "channel": "i4", "program": "i4",
               "bank": "i4", "preset": "U", "track": "i4", "track_name": "U", "drum": "?", "stem": "U", "soundfont": "U"}


def _labels(text):
    rows = list(csv.reader(io.StringIO(text)))
    header, rows = rows[0], rows[1:]
    columns = list(zip(*rows)) if rows else [()] * len(header)
    dtype = []
    for name, values in zip(header, columns):
        kind = _NOTE_TYPES.get(name, "U")
        if kind == "U":
            kind = f"U{max([1] + [len(v) for v in values])}"
        dtype.append((name, kind))
    array = np.empty(len(rows), dtype=dtype)
    for (name, kind), values in zip(dtype, columns):
        if kind == "?":
            array[name] = [v == "true" for v in values]
        else:
            array[name] = np.array(values, dtype=str).astype(kind) if values else []
    return Labels(array)


class Labels(np.ndarray):
    """The notes as rendered (notes.csv's columns), a numpy structured array."""

    def __new__(cls, array):
        return np.asarray(array).view(cls)

    def to_pandas(self):
        import pandas as pd   # only when asked: pandas is no dependency
        return pd.DataFrame.from_records(np.asarray(self))


class Result:
    """One render: the audio, the labels (with labels=True) and the manifest line's facts."""

    def __init__(self, audio, facts, labels):
        self.audio = audio
        self.facts = facts
        self.labels = labels

    # The manifest's facts, under its names (carillon render --manifest).
    duration = property(lambda self: self.facts["rendered_seconds"], doc="Seconds of audio rendered.")
    piece_duration = property(lambda self: self.facts["piece_seconds"], doc="Seconds of the piece to its last event.")
    peak_dbfs = property(lambda self: self.facts["peak_dbfs"], doc="Highest sample, dBFS (None: silent).")
    loudness = property(lambda self: self.facts["loudness_lufs"],
                        doc="Integrated loudness, LUFS, with loudness=True (None: not asked, or silent).")
    limits = property(lambda self: self.facts["limits"], doc="What the damage rules and max_duration cut, one sentence each.")
    limit_seconds_cut = property(lambda self: self.facts["limit_seconds_cut"])
    dead_air_seconds = property(lambda self: self.facts["dead_air_seconds"], doc="A late end of track not rendered.")
    warnings = property(lambda self: self.facts["warnings"], doc="What the MIDI reader salvaged of a damaged file.")
    truncated = property(lambda self: self.facts["truncated"])
    soundfont = property(lambda self: self.facts["soundfont"])
    timbres = property(lambda self: self.facts.get("timbres"),
                       doc="With timbres=: what each track drew (track, track_name, channel, class, from_bank, "
                           "from_program, bank, program, preset, candidates), one dict each; else None.")

    def __repr__(self):
        return f"<carillon.Result {self.audio.shape[0]} frames, {self.duration:.2f} s>"


class _ResultSamples:
    """A render's samples where the library holds them, as numpy takes them (`__array_interface__`):
    the array made on them keeps this alive, and the result is freed when it goes. Copying them
    out cost a few percent of a render (Benchmarks/README.md, "Where the `Renderer`'s time goes")."""

    def __init__(self, result, frames):
        self._result = result
        self.__array_interface__ = {"data": (_lib.carillon_result_samples(result), False), "shape": (frames, 2),
                                    "typestr": "<f4", "version": 3}

    def __del__(self):
        if _lib is not None:
            _lib.carillon_result_free(self._result)


class Renderer:
    """Reads the SoundFont(s) once and renders many files, from any number of threads at once.

    `soundfont` is a path or a list of paths (several: each input's font picked by a hash of its key,
    as `carillon render --soundfont a --soundfont b`); None finds the default as the CLI does.
    `options` are `carillon render`'s long options, dashes as underscores: gain=, reverb=False,
    chorus_level=, transpose=, tempo=, velocity_scale=, program_map=, seed=, labels=True, mapping=,
    timbres="per-track" (or a pool file's path, or the pool as a dict: {"piano": [0, 1, "8:4"], "drums": [0, 8]}),
    take=True, max_duration=, no_limit=True, tail=, block=, set=[...], …; and loudness=True, Python's
    own, for the integrated loudness in each result (the CLI measures it for its manifest)."""

    def __init__(self, soundfont=None, sample_rate=44100, threads=1, **options):
        config = dict(options)
        if isinstance(config.get("timbres"), dict):   # a pool given inline: the pool file's mapping, as JSON
            config["timbres"] = json.dumps({str(k): v for k, v in config["timbres"].items()})
        if soundfont is not None:
            config["soundfont"] = [os.fspath(f) for f in soundfont] if isinstance(soundfont, (list, tuple)) \
                else os.fspath(soundfont)
        config["rate"] = sample_rate
        config["threads"] = threads
        def path_or_refuse(value):   # a pathlib.Path for mapping=, program_map=, …
            if isinstance(value, os.PathLike):
                return os.fspath(value)
            raise TypeError(f"{type(value).__name__} is not one")

        try:
            text = json.dumps(config, default=path_or_refuse)
        except (TypeError, ValueError) as e:
            raise OptionError(f"the options must be numbers, strings, booleans or lists of them: {e}") from None
        kind, message = _ctypes.c_int32(0), _ctypes.c_void_p(None)
        handle = _lib.carillon_renderer_new(text.encode(), _ctypes.byref(kind), _ctypes.byref(message))
        if not handle:
            _raise(kind, message)
        self._handle = handle
        self.sample_rate = sample_rate

    def render(self, midi, key=None):
        """Renders `midi` (see `midi_bytes`) into a `Result`. `key` picks the font and draws the
        augmentation (default: a path's file name, as `carillon render FILE`; in-memory data's hash)."""
        if self._handle is None:
            raise Error("this Renderer is closed")
        data, name, default_key = midi_bytes(midi)
        kind, message = _ctypes.c_int32(0), _ctypes.c_void_p(None)
        result = _lib.carillon_render(self._handle, data, len(data), name.encode(), (key or default_key).encode(),
                                      _ctypes.byref(kind), _ctypes.byref(message))
        if not result:
            _raise(kind, message)
        try:
            facts = json.loads(_take_string(_lib.carillon_result_facts(result)))
            notes = _take_string(_lib.carillon_result_notes_csv(result))
            frames = _lib.carillon_result_frames(result)
        except BaseException:
            _lib.carillon_result_free(result)
            raise
        if frames == 0:
            _lib.carillon_result_free(result)
            audio = np.empty((0, 2), dtype=np.float32)
        else:
            # The result's own samples, no copy: freed with the last array made on them.
            audio = np.asarray(_ResultSamples(result, frames))
        return Result(audio, facts, _labels(notes) if notes is not None else None)

    def stream(self, midi, key=None, chunk_frames=65536):
        """The render as it comes: a `Stream` of float32 (frames, 2) chunks of `chunk_frames`
        (the last shorter), a few chunks held at once whatever the piece's length. The
        chunks put together are `render(midi).audio`; the stream's `.result` (facts, labels,
        no audio) is there once it is exhausted. Needs threads=1 (see `Stream`)."""
        if self._handle is None:
            raise Error("this Renderer is closed")
        return Stream(self, *midi_bytes(midi), key, chunk_frames)

    def __call__(self, midi, key=None):
        return self.render(midi, key).audio

    def close(self):
        """Frees the fonts now (not while another thread renders with this Renderer)."""
        handle, self._handle = self._handle, None
        if handle:
            _lib.carillon_renderer_free(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None):
            self.close()


class Stream:
    """An iterator over a render's chunks. The render runs on a thread of its own, each
    chunk handed over a queue of one: the render waits while the consumer has not taken
    the last, so memory stays bounded. Leaving the loop early (or `close()`) stops the
    render. A pool of synths (threads > 1) may start a piece again on one synth, and
    chunks handed on cannot be taken back: a stream needs threads=1 (OptionError)."""

    def __init__(self, renderer, data, name, default_key, key, chunk_frames):
        self._queue = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self.result = None
        self._error = None
        key = (key or default_key).encode()

        def on_chunk(samples, frames, _context):
            if self._stop.is_set():
                return 1
            chunk = np.ctypeslib.as_array(samples, shape=(frames * 2,)).copy().reshape(frames, 2)
            while not self._stop.is_set():
                try:
                    self._queue.put(chunk, timeout=0.1)
                    return 0
                except queue.Full:
                    continue
            return 1

        self._callback = _STREAM_CALLBACK(on_chunk)   # kept alive as long as the render runs

        def run():
            kind, message = _ctypes.c_int32(0), _ctypes.c_void_p(None)
            result = _lib.carillon_render_stream(renderer._handle, data, len(data), name.encode(), key, chunk_frames,
                                                 self._callback, None, _ctypes.byref(kind), _ctypes.byref(message))
            try:
                if not result:
                    _raise(kind, message)
                try:
                    facts = json.loads(_take_string(_lib.carillon_result_facts(result)))
                    notes = _take_string(_lib.carillon_result_notes_csv(result))
                finally:
                    _lib.carillon_result_free(result)
                self.result = Result(np.empty((0, 2), np.float32), facts, _labels(notes) if notes is not None else None)
            except _Stopped:
                pass
            except Error as e:
                self._error = e
            finally:
                self._queue.put(None)   # the end (the consumer takes it, or close() drains)

        self._thread = threading.Thread(target=run, name="carillon-stream", daemon=True)
        self._thread.start()

    def __iter__(self):
        return self

    def __next__(self):
        if self._thread is None:
            raise StopIteration
        chunk = self._queue.get()
        if chunk is None:
            self._thread.join()
            self._thread = None
            if self._error is not None:
                raise self._error
            raise StopIteration
        return chunk

    def close(self):
        """Stops the render (if still under way) and waits for its thread."""
        self._stop.set()
        if self._thread is not None:
            while self._thread.is_alive():
                try:
                    self._queue.get(timeout=0.1)
                except queue.Empty:
                    pass
            self._thread.join()
            self._thread = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_thread", None) is not None:
            self.close()


# render()'s renderers by their options, per process (a forked child starts without its parent's).
_renderers = {}
_renderers_lock = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: (_renderers.clear(), globals().__setitem__("_renderers_lock", threading.Lock())))


def render(midi, soundfont=None, sample_rate=44100, key=None, threads=1, **options):
    """`midi` rendered to a float32 numpy array of shape (frames, 2): the same samples as
    `carillon render FILE -o out.wav --bits 32` with the same options (see `Renderer`).
    A Renderer per set of options is kept, so the fonts are read once per process."""
    signature = json.dumps([soundfont if not isinstance(soundfont, os.PathLike) else os.fspath(soundfont),
                            sample_rate, threads, options], sort_keys=True, default=str)
    with _renderers_lock:
        renderer = _renderers.get(signature)
        if renderer is None:
            renderer = Renderer(soundfont, sample_rate, threads, **options)
            _renderers[signature] = renderer
    return renderer.render(midi, key).audio
