import Engine
import FluidSynth

/// On-demand samples: with `synth.dynamic-sample-loading`, FluidSynth loads a
/// preset's samples when a channel selects it and frees them when none does —
/// from the thread that sends the program change, the render thread while a
/// piece plays. So before a piece renders, Carillon plays its program and
/// bank changes and SysEx (no notes) through the synth, lets FluidSynth select
/// exactly what it will select while playing, and pins each preset selected on
/// the way: while the piece plays, nothing is loaded or freed, and only those
/// presets' samples are in memory.
extension FluidSynthInstrument {
    /// What a score selects, found by `pinPresets(selectedBy:)`.
    public struct Selection: Sendable {
        /// Every preset a channel selects at some point (the start's defaults included).
        public var presets: Set<Synth.PresetAddress> = []
        /// Bit c: channel c selects a percussion preset at some point.
        public var percussionChannels: UInt16 = 0
    }

    /// Pins every preset `score` selects, unpins those pinned for an earlier
    /// score and no longer needed (`previous`), and leaves the synth reset as
    /// FluidSynth starts (GS mode, default presets). Not on the render thread.
    public func pinPresets(selectedBy score: Score,
                           unpinning previous: Set<Synth.PresetAddress> = []) throws(FluidSynthError) -> Selection {
        var selection = Selection()
        resetToGS()
        func look(at channel: Int) throws(FluidSynthError) {
            guard let preset = synth.preset(onChannel: channel) else { return }
            if preset.isPercussion { selection.percussionChannels |= 1 << channel }
            if selection.presets.insert(preset).inserted { try synth.pin(preset) }
        }
        for c in 0..<16 { try look(at: c) }
        for event in score.events {
            let message = event.message
            if message.isSysEx {
                let number = message.sysExNumber
                guard number < score.sysExMessages.count else { continue }
                let bytes = score.sysExMessages[number]
                // MIDI Tuning messages select nothing (and make FluidSynth allocate tunings).
                if bytes.count > 3 && (bytes[0] == 0x7E || bytes[0] == 0x7F) && bytes[2] == 0x08 { continue }
                let accepted = bytes.withUnsafeBufferPointer { synth.sysEx($0) }
                if accepted { for c in 0..<16 { try look(at: c) } }
            } else if message.kind == 0xC0 {
                _ = send(message)
                try look(at: message.channel)
            } else if message.kind == 0xB0 && (message.data1 == 0 || message.data1 == 32) {
                _ = send(message)   // bank select: takes effect at the next program change
            }
        }
        for preset in previous where !selection.presets.contains(preset) { synth.unpin(preset) }
        resetToGS()
        return selection
    }

    /// A Roland GS reset: every channel reset and FluidSynth's bank-select
    /// style back to GS, its default (a GM or XG System On in a piece changes
    /// the style, and a system reset keeps it).
    private func resetToGS() {
        let gsReset: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]
        _ = gsReset.withUnsafeBufferPointer { synth.sysEx($0) }
        _ = synth.systemReset()
    }
}
