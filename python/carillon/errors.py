"""Errors by kind, each with the CLI's message for the same mistake."""


class Error(Exception):
    """Anything carillon refuses or fails at."""


class MIDIError(Error):
    """The MIDI input cannot be read (not a Standard MIDI File, a damaged header, …)."""


class SoundFontError(Error):
    """A SoundFont cannot be found or loaded."""


class OptionError(Error, ValueError):
    """An option or its value is wrong, or does not apply to a render in memory."""


class RenderError(Error):
    """The render itself failed (a plugin, a thread, …)."""


class _Stopped(Error):
    """A stream's consumer stopped the render (not raised to callers)."""


# The C ABI's kinds (CarillonError.kind in Sources/CarillonC).
BY_KIND = {1: MIDIError, 2: SoundFontError, 3: OptionError, 4: RenderError, 5: _Stopped}
