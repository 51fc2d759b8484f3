import Parameters

/// The built-in tone as a source of the renderer, like the oscillator: it
/// reads the `tone.*` settings (and its level, `strip(.tone, .gain)`, which
/// it applies itself: it fades on every change) from the store each block
/// and renders the `ToneGenerator` into its strip's buffers.
///
/// The frequency follows `tone.frequency`, or `tone.note` and `tone.a4`:
/// whichever was changed last (before the renderer existed, a note or A4 set
/// and no frequency). A note (or A4) change fades out and in at the new
/// pitch; a frequency change glides.
///
/// Threads: `init` and `prepare` off the render thread; `render` on it (plain
/// value state: no allocation, no locks).
struct ToneSource {
    private var generator = ToneGenerator()
    /// The slots read, in this order: frequency, level, waveform, enabled, note, A4.
    private static let slots = [ParameterAddress.tone(.frequency).index, ParameterAddress.strip(.tone, .gain).index,
                                ParameterAddress.tone(.waveform).index, ParameterAddress.tone(.enabled).index,
                                ParameterAddress.tone(.note).index, ParameterAddress.tone(.a4).index]
    private static let frequency = 0, level = 1, waveform = 2, enabled = 3, note = 4, a4 = 5
    private var values: (Float, Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0, 0)
    private var seen: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (.max, .max, .max, .max, .max, .max)
    private var followsNote = false
    private var noteFrequency: Float = 440
    /// The store's slot indices, copied once (the static array is not read on the render thread).
    private let indices: (Int, Int, Int, Int, Int, Int)

    init(parameters: ParameterStore) {
        let s = Self.slots
        indices = (s[0], s[1], s[2], s[3], s[4], s[5])
        _ = refresh(parameters)
        // Set before the renderer existed: a note or A4 set (and no frequency) wins.
        followsNote = parameters.read(indices.0).counter == 0
            && (parameters.read(indices.4).counter != 0 || parameters.read(indices.5).counter != 0)
    }

    /// Resets the phase and fades (see `ToneGenerator.prepare`). Not on the render thread.
    mutating func prepare(sampleRate: Double) { generator.prepare(sampleRate: sampleRate) }

    /// Reads the slots whose change counters moved; returns whether any did.
    @inline(__always)
    private mutating func refresh(_ parameters: ParameterStore) -> Bool {
        var changed = false
        func take(_ index: Int, _ value: inout Float, _ seen: inout UInt32) -> Bool {
            let (v, counter) = parameters.read(index)
            guard counter != seen else { return false }
            seen = counter; value = v
            return true
        }
        if take(indices.0, &values.0, &seen.0) { changed = true; followsNote = false }
        if take(indices.1, &values.1, &seen.1) { changed = true }
        if take(indices.2, &values.2, &seen.2) { changed = true }
        if take(indices.3, &values.3, &seen.3) { changed = true }
        if take(indices.4, &values.4, &seen.4) { changed = true; followsNote = true }
        if take(indices.5, &values.5, &seen.5) { changed = true; followsNote = true }
        if changed { noteFrequency = Self.noteFrequency(values.4, a4: values.5) }
        return changed
    }

    /// A4 · 2^((note − 69) / 12); NaN in either gives NaN (the tone then holds its frequency).
    private static func noteFrequency(_ note: Float, a4: Float) -> Float {
        Float(Double(a4) * ToneGenerator.exp2((Double(note) - 69) / 12))
    }

    /// Renders one block into planar `left` and `right` (`frames` each),
    /// which it zeroes first, when the tone is on or still fading; returns
    /// whether it did (false: the buffers are untouched and the strip silent). Render thread.
    @inline(__always)
    mutating func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                         parameters: ParameterStore) -> Bool {
        _ = refresh(parameters)
        guard values.3 >= 0.5 || !generator.isSilent else { return false }
        left.update(repeating: 0, count: frames)
        right.update(repeating: 0, count: frames)
        generator.render(frames: frames, left: left, right: right,
                         frequency: followsNote ? noteFrequency : values.0, level: values.1,
                         waveform: values.2, enabled: values.3, glides: !followsNote)
        return true
    }
}
