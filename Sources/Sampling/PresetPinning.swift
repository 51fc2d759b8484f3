import Engine
import FluidSynth

/// On-demand samples: with `synth.dynamic-sample-loading`, FluidSynth loads a
/// preset's samples when a channel selects it and frees them when none does —
/// from the thread that sends the program change, the render thread while a
/// piece plays. So before a piece renders, Carillon plays its program and
/// bank changes and SysEx (no notes) through the synth, lets FluidSynth select
/// exactly what it will select while playing, and pins each preset selected on
/// the way: while the piece plays, nothing is loaded or freed, and only those
/// presets' samples are in memory. On the way it notes what each note-on will
/// play (`Selection.notes`), for a view of the font that keeps only those
/// zones' samples (`SampleSelection`).
extension FluidSynthInstrument {
    /// What a score selects, found by `pinPresets(selectedBy:)`.
    public struct Selection: Sendable {
        /// Every preset a channel selects at some point (the start's defaults included).
        public var presets: Set<Synth.PresetAddress> = []
        /// Bit c: channel c selects a percussion preset at some point.
        public var percussionChannels: UInt16 = 0
        /// The (key, velocity) pairs FluidSynth will choose zones by on each
        /// preset: every note-on's, on the preset its channel has then.
        public var notes = PlayedNotes()
        /// `notes` font by font (by FluidSynth's font ID), for a synth with
        /// several fonts (`--timbres` across a set): each font's view keeps its own.
        public var notesByFont: [Int32: PlayedNotes] = [:]
        /// Bit c: channel c plays mono (CC 124–127 on a basic channel, as
        /// `ChannelModes` follows FluidSynth's table: a group of channels at
        /// once), legato (CC 68) or with portamento (CC 65, CC 84) at some point.
        public var interactingChannels: UInt16 = 0
        /// Per preset: the channels (bit c) that play a note-on on it.
        public var channelsPlaying: [Synth.PresetAddress: UInt16] = [:]
        /// The preset each note-on (velocity above 0, on a channel not
        /// skipped) plays, in score order, as FluidSynth chose it: for labels.
        public var notePresets: [Synth.PresetAddress?] = []
    }

    /// Pins every preset `score` selects, unpins those pinned for an earlier
    /// score and no longer needed (`previous`), and leaves the synth reset as
    /// FluidSynth starts (GS mode, default presets), no voice sounding.
    /// `skipping` (bit c: channel c) names channels whose messages never reach
    /// the synth (oscillator channels). Not on the render thread.
    public func pinPresets(selectedBy score: Score, unpinning previous: Set<Synth.PresetAddress> = [],
                           skipping: UInt16 = 0) throws(FluidSynthError) -> Selection {
        var selection = Selection()
        resetAndFinishVoices()
        var channelPreset = [Synth.PresetAddress?](repeating: nil, count: 16)
        var notes = NoteTracker(score)
        var modes = ChannelModes(deviceID: synth.deviceID)
        func look(at channel: Int) throws(FluidSynthError) {
            let preset = synth.preset(onChannel: channel)
            channelPreset[channel] = preset
            guard let preset else { return }
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
                if NoteTracker.isTuning(bytes) { continue }
                let accepted = bytes.withUnsafeBufferPointer { synth.sysEx($0) }
                if accepted { for c in 0..<16 { try look(at: c) } }
                if bytes.withUnsafeBufferPointer({ modes.resets($0) }) { modes.reset() }
                continue
            }
            let channel = message.channel
            guard skipping & 1 << channel == 0 else { continue }
            switch message.kind {
            case 0xC0:
                _ = send(message)
                try look(at: channel)
            case 0xB0 where message.data1 == 0 || message.data1 == 32:
                _ = send(message)   // bank select: takes effect at the next program change
            case 0xB0 where (124...127).contains(message.data1):
                // Mode changes enable and disable channels: FluidSynth refuses
                // program changes (and notes) on a disabled one.
                _ = send(message)
                let reach = modes.reach(ofControlOn: channel)
                for c in 0..<16 where reach & 1 << c != 0 {
                    _ = modes.changeMode(onChannel: c, controller: Int(message.data1), value: Int(message.data2))
                    selection.interactingChannels |= modes.monoChannels
                }
                notes.observe(message, preset: channelPreset[channel], into: &selection)
            case 0xB0 where message.data1 == 84 || ((message.data1 == 65 || message.data1 == 68) && message.data2 >= 64):
                let reach = modes.reach(ofControlOn: channel)
                selection.interactingChannels |= reach
                if message.data1 == 68 { notes.mayPlayMono(reach) }
            default:
                if message.kind == 0x90 && message.data2 > 0 {
                    selection.notePresets.append(channelPreset[channel])
                    if let preset = channelPreset[channel] { selection.channelsPlaying[preset, default: 0] |= 1 << channel }
                }
                notes.observe(message, preset: channelPreset[channel], into: &selection)
            }
        }
        for preset in previous where !selection.presets.contains(preset) { synth.unpin(preset) }
        resetToGS()
        return selection
    }

    /// A Roland GS reset: every channel reset and FluidSynth's bank-select
    /// style back to GS, its default (a GM or XG System On in a piece changes
    /// the style, and a system reset keeps it).
    package func resetToGS() {
        let gsReset: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]
        _ = gsReset.withUnsafeBufferPointer { synth.sysEx($0) }
        _ = synth.systemReset()
    }

    /// `resetToGS`, then renders (output dropped) until no voice sounds: a
    /// voice holds its sample until FluidSynth's render side has finished it
    /// (at most a 64-frame block after the reset), and a font whose samples a
    /// voice holds cannot be unloaded (FluidSynth would leave a timer thread
    /// retrying). Whole blocks, so FluidSynth's block grid stays where it was.
    /// Not on the render thread.
    package func resetAndFinishVoices() {
        resetToGS()
        for _ in 0..<16 where synth.activeVoiceCount > 0 {
            _ = synth.process(frames: eventGranularity, fx: nil, fxCount: 0, out: nil, outCount: 0)
        }
    }
}

/// What the note-ons of a score play, for `pinPresets`: each note-on's key
/// and velocity on its channel's preset, and the notes FluidSynth plays
/// without a note-on of their own.
///
/// - A channel playing mono (FluidSynth: poly off by CC 126, or the legato
///   pedal CC 68 down) returns, when the newest held note is released, to the
///   one held before it, with that note's velocity, on the preset the channel
///   has *then* (fluid_synth_noteoff_mono_LOCAL): at each note-off on such a
///   channel, every note still held counts as played on its current preset.
/// - A MIDI Tuning message (or a tuning program or bank RPN, which may
///   select one an earlier piece sent) makes FluidSynth choose zones by the
///   tuned pitch of a key (fluid_defpreset_noteon's `tuned_key`): then every
///   key counts as played at each note-on's velocity.
package struct NoteTracker {
    private let tuned: Bool
    /// Bit c: channel c may play mono from here on.
    private var mono: UInt16 = 0
    /// Per channel, notes pressed while it may play mono and not yet released (oldest first).
    private var held = [[(key: UInt8, velocity: UInt8)]](repeating: [], count: 16)
    /// FluidSynth keeps 10 notes in its mono list; these are the newest of a channel's.
    private static let heldCapacity = 128

    init(_ score: Score) {
        tuned = score.sysExMessages.contains(where: Self.isTuning)
            || score.events.contains { $0.message.kind == 0xB0 && $0.message.data1 == 100 && (3...4).contains($0.message.data2) }
    }

    /// Universal SysEx, sub-ID 08: MIDI Tuning Standard.
    package static func isTuning(_ bytes: [UInt8]) -> Bool {
        bytes.count > 3 && (bytes[0] == 0x7E || bytes[0] == 0x7F) && bytes[2] == 0x08
    }

    /// Channels (bit c) that may play mono from here on (the legato pedal down, reaching them).
    mutating func mayPlayMono(_ channels: UInt16) { mono |= channels }

    mutating func observe(_ message: ChannelMessage, preset: Synth.PresetAddress?, into notes: inout FluidSynthInstrument.Selection) {
        let channel = message.channel
        switch message.kind {
        case 0x90 where message.data2 > 0:
            if let preset { record(preset, message.data1, message.data2, into: &notes) }
            if mono & 1 << channel != 0 {
                if held[channel].count == Self.heldCapacity { held[channel].removeFirst() }
                held[channel].append((message.data1, message.data2))
            }
        case 0x80, 0x90:
            guard mono & 1 << channel != 0 else { return }
            if let i = held[channel].firstIndex(where: { $0.key == message.data1 }) { held[channel].remove(at: i) }
            if let preset { for note in held[channel] { record(preset, note.key, note.velocity, into: &notes) } }
        case 0xB0 where message.data1 == 126:
            mono = 0xFFFF   // mono mode may take a group of channels from the basic channel on
        case 0xB0 where message.data1 == 68 && message.data2 >= 64:
            mono |= 1 << channel
        default:
            break
        }
    }

    private func record(_ preset: Synth.PresetAddress, _ key: UInt8, _ velocity: UInt8, into selection: inout FluidSynthInstrument.Selection) {
        let bank = Int(preset.bank), program = Int(preset.program)
        func insert(_ notes: inout PlayedNotes) {
            if tuned {
                notes.insertEveryKey(bank: bank, program: program, velocity: Int(velocity))
            } else {
                notes.insert(bank: bank, program: program, key: Int(key), velocity: Int(velocity))
            }
        }
        insert(&selection.notes)
        insert(&selection.notesByFont[preset.soundFontID, default: PlayedNotes()])
    }
}
