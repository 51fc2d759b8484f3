import Engine
import FluidSynth
import MIDI
import Sampling

extension FluidSynthInstrument {
    /// `score` with a file's draw applied to its notes and programs, and how
    /// many notes `--transpose` dropped. Which channel plays drums is found as
    /// the labels find it: the preset FluidSynth has on the channel at that
    /// moment is in the percussion bank (128) — channel 10, and any channel a
    /// bank select (XG's 127, bank 128 with the MMA style) or a GS drum-part
    /// SysEx makes a drum kit. So the selections (program and bank changes,
    /// mode changes, SysEx) are replayed through this synth, as
    /// `pinPresets` does, and it is left reset as FluidSynth starts. Not on
    /// the render thread.
    ///
    /// - Transpose moves note-on, note-off and polyphonic key pressure of
    ///   every channel but drums; a note pushed outside 0...127 is dropped with
    ///   its note-off (and its key pressure). A note-off follows its note-on's
    ///   fate, even when the channel changed kind in between.
    /// - Velocity scale multiplies every note-on's velocity (drums too),
    ///   rounded, kept within 1...127; a velocity-0 note-on stays a note-off.
    /// - The program map changes program changes on every channel but drums
    ///   (a program change that selects a drum kit is left alone), and a
    ///   channel that plays notes on program 0 without having received a
    ///   program change (since the start or a GM/GS/XG reset) gets the map's
    ///   program for 0 just before its first such note.
    func augmenting(_ score: Score, with draw: Augmentation.Draw) -> (score: Score, notesDropped: Int) {
        guard draw.changesEvents else { return (score, 0) }
        resetAndFinishVoices()
        defer { resetToGS() }
        let map = draw.programMap.flatMap { $0.isIdentity ? nil : $0 }
        var modes = ChannelModes(deviceID: synth.deviceID)
        var drums = [Bool](repeating: false, count: 16)
        func look(at channel: Int) { drums[channel] = synth.preset(onChannel: channel)?.isPercussion ?? false }
        for c in 0..<16 { look(at: c) }
        /// A program change reached the channel since the start or the last reset.
        var programSent = [Bool](repeating: false, count: 16)
        /// Per channel·128 + key as written: the key its note-on was moved to, -1: dropped.
        var moved: [Int: Int] = [:]
        var dropped = 0
        var events: [Score.Event] = []
        events.reserveCapacity(score.events.count + 16)

        /// Where a note of `channel` written as `key` goes now (nil: outside 0...127).
        func destination(_ channel: Int, _ key: UInt8) -> UInt8? {
            if drums[channel] { return key }
            let k = Int(key) + draw.transpose
            return (0...127).contains(k) ? UInt8(k) : nil
        }
        func withKey(_ m: ChannelMessage, _ key: UInt8) -> ChannelMessage { ChannelMessage(status: m.status, data1: key, data2: m.data2) }

        for event in score.events {
            var m = event.message
            if m.isSysEx {
                events.append(event)
                let number = m.sysExNumber
                guard number < score.sysExMessages.count else { continue }
                let bytes = score.sysExMessages[number]
                if NoteTracker.isTuning(bytes) { continue }
                if bytes.withUnsafeBufferPointer({ synth.sysEx($0) }) { for c in 0..<16 { look(at: c) } }
                if bytes.withUnsafeBufferPointer({ modes.resets($0) }) {
                    modes.reset()
                    programSent = [Bool](repeating: false, count: 16)
                }
                continue
            }
            let channel = m.channel
            switch m.kind {
            case 0xC0:
                _ = send(m)
                look(at: channel)
                programSent[channel] = true
                if let map, !drums[channel] {
                    let program = map[UInt7(m.data1)].value
                    if program != m.data1 {
                        m = ChannelMessage(status: m.status, data1: program)
                        _ = send(m)
                        look(at: channel)
                    }
                }
            case 0xB0 where m.data1 == 0 || m.data1 == 32 || (124...127).contains(m.data1):
                _ = send(m)   // bank select (at the next program change), mode changes
                look(at: channel)
            case 0x90 where m.data2 > 0:
                let key = channel << 7 | Int(m.data1)
                guard let to = destination(channel, m.data1) else {
                    moved[key] = -1
                    dropped += 1
                    continue
                }
                moved[key] = Int(to)
                if let map, !programSent[channel], !drums[channel], map[0] != 0 {
                    // The channel plays program 0 without a program change: the map's program for 0 first.
                    let change = ChannelMessage(status: 0xC0 | UInt8(channel), data1: map[0].value)
                    events.append(Score.Event(seconds: event.seconds, message: change, track: event.track))
                    _ = send(change)
                    look(at: channel)
                    programSent[channel] = true
                }
                m = ChannelMessage(status: m.status, data1: to, data2: draw.scaled(velocity: m.data2))
            case 0x80, 0x90, 0xA0:
                let key = channel << 7 | Int(m.data1)
                let to = moved[key] ?? destination(channel, m.data1).map(Int.init) ?? -1
                if m.kind != 0xA0 { moved[key] = nil }
                guard to >= 0 else { continue }
                m = withKey(m, UInt8(to))
            default:
                break
            }
            events.append(Score.Event(seconds: event.seconds, message: m, track: event.track))
        }
        var out = Score(events: events, duration: score.duration)
        out.sysExMessages = score.sysExMessages
        return (out, dropped)
    }
}
