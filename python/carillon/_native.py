"""libcarillonc.so through ctypes: the C ABI (Sources/CarillonC/CABI.swift).

ctypes.CDLL releases the GIL for the length of every foreign call, so other
Python threads run while one renders."""
import ctypes
import os
from pathlib import Path

_here = Path(__file__).resolve().parent


# A stream's chunk: interleaved stereo samples, their frames, the context; non-zero stops the render.
STREAM_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_float), ctypes.c_int64, ctypes.c_void_p)


def _load() -> ctypes.CDLL:
    path = os.environ.get("CARILLON_LIBRARY") or str(_here / "libcarillonc.so")
    if not Path(path).is_file():
        raise ImportError(f"carillon: {path} is missing: install the package with pip install ./python "
                          "from the Carillon checkout (it builds the library)")
    lib = ctypes.CDLL(path)
    handle, char_p, out_kind, out_message = ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int32), \
        ctypes.POINTER(ctypes.c_void_p)
    lib.carillon_renderer_new.argtypes = [char_p, out_kind, out_message]
    lib.carillon_renderer_new.restype = handle
    lib.carillon_renderer_free.argtypes = [handle]
    lib.carillon_renderer_free.restype = None
    lib.carillon_render.argtypes = [handle, ctypes.c_char_p, ctypes.c_int64, char_p, char_p, out_kind, out_message]
    lib.carillon_render.restype = handle
    lib.carillon_render_stream.argtypes = [handle, ctypes.c_char_p, ctypes.c_int64, char_p, char_p, ctypes.c_int64,
                                           STREAM_CALLBACK, ctypes.c_void_p, out_kind, out_message]
    lib.carillon_render_stream.restype = handle
    lib.carillon_result_frames.argtypes = [handle]
    lib.carillon_result_frames.restype = ctypes.c_int64
    lib.carillon_result_copy_samples.argtypes = [handle, ctypes.c_void_p, ctypes.c_int64]
    lib.carillon_result_copy_samples.restype = None
    lib.carillon_result_samples.argtypes = [handle]
    lib.carillon_result_samples.restype = ctypes.c_void_p
    # Strings the library allocates come back as void pointers, read, then freed by it.
    lib.carillon_result_facts.argtypes = [handle]
    lib.carillon_result_facts.restype = ctypes.c_void_p
    lib.carillon_result_notes_csv.argtypes = [handle]
    lib.carillon_result_notes_csv.restype = ctypes.c_void_p
    lib.carillon_result_free.argtypes = [handle]
    lib.carillon_result_free.restype = None
    lib.carillon_string_free.argtypes = [ctypes.c_void_p]
    lib.carillon_string_free.restype = None
    return lib


lib = _load()


def take_string(pointer) -> "str | None":
    """A string the library allocated, decoded and freed."""
    if not pointer:
        return None
    try:
        return ctypes.string_at(pointer).decode("utf-8", errors="replace")
    finally:
        lib.carillon_string_free(pointer)
