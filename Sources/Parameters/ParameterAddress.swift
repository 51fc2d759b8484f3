import MIDI

/// The name of one parameter a control can move, Csound's "named channel":
/// `master.gain`, `strip.3.pan`, `synth.reverb.room-size`, `channel.1.cc.74`,
/// `transport.play`, `tone.frequency`, `track.2.pan` …
///
/// Strip and channel numbers are MIDI channels shown to people, 1...16; inside,
/// they are `Channel` values (0-based). Every address also has a dense integer
/// `index` (0..<`ParameterAddress.count`) so the render thread can keep one
/// atomic per parameter in a flat array.
public enum ParameterAddress: Hashable, Sendable {
    case masterGain
    /// A mixer strip's gain, balance, mute or solo: a MIDI channel's, the
    /// oscillator's, the tone's, a shared effect return's or an audio-file
    /// track's (`StripID`).
    case strip(StripID, StripParameter)
    case reverb(Reverb)
    case chorus(Chorus)
    /// A control change passed on to the sampler on this channel.
    case channelCC(Channel, UInt7)
    case channelProgram(Channel)
    case channelPitchBend(Channel)
    /// The pitch a control plays on the channel while `channelGate` holds it
    /// (an xy pad's x, a page's keyboard): a new pitch while held is a new note.
    case channelNote(Channel)
    /// Holds `channelNote` down: note-on at 1, note-off at 0.
    case channelGate(Channel)
    case transport(Transport)
    case tone(Tone)
    /// The oscillator instrument (the MIDI channels routed to it play it).
    case osc(Osc)
    /// The mapping's scene to switch to, by its place in `scenes:` (0 = the first).
    case sceneSelect
    /// The keyboard's transposition (`rig.transpose`): semitones added to every note it plays.
    case rigTranspose
    /// A plugin's control port: row `k` of `PluginParameters`, registered at
    /// load time (`plugin.N.SYMBOL`, `insert.STRIP.K.SYMBOL`).
    case plugin(Int)

    /// What every strip has. Adding a per-strip parameter is a case here, its
    /// row in `spec` and its DSP in the `Mixer`.
    public enum StripParameter: String, CaseIterable, Sendable { case gain, pan, mute, solo }

    /// Which mixer strip: the strips in the mixer's order. A track is 0 ..<
    /// `maxTracks`, shown 1-based (`track.1.gain`).
    public enum StripID: Hashable, Sendable {
        case channel(Channel)
        case oscillator
        case tone
        /// The shared effect returns (one reverb and chorus for every channel;
        /// with `--channel-effects` each channel's effects are in its own strip).
        case reverb
        case chorus
        case track(Int)

        /// Every strip with parameters, in the mixer's (and the index's) order.
        public static let all: [StripID] = (0..<16).map { .channel(Channel($0)) } + [.oscillator, .tone, .reverb, .chorus]
            + (0..<ParameterAddress.maxTracks).map { .track($0) }

        /// A short, stable name: `1`…`16`, `osc`, `tone`, `reverb`, `chorus`, `track1`…
        public var key: String {
            switch self {
            case .channel(let c): "\(c.intValue + 1)"
            case .oscillator: "osc"
            case .tone: "tone"
            case .reverb: "reverb"
            case .chorus: "chorus"
            case .track(let n): "track\(n + 1)"
            }
        }

        /// The place in `all` (a track clamped into range).
        public var ordinal: Int {
            switch self {
            case .channel(let c): c.intValue
            case .oscillator: 16
            case .tone: 17
            case .reverb: 18
            case .chorus: 19
            case .track(let n): 20 + min(max(n, 0), ParameterAddress.maxTracks - 1)
            }
        }
    }
    public enum Reverb: String, CaseIterable, Sendable {
        case roomSize = "room-size", damping, width, level, enabled
    }
    public enum Chorus: String, CaseIterable, Sendable { case level, depth, speed, voices, enabled }
    public enum Transport: String, CaseIterable, Sendable { case play, stop, tempo, position, loop }
    /// `note` and `a4` set the frequency from a MIDI pitch (the reference-pitch
    /// tool); `frequency` sets it directly. The last one changed wins.
    /// The tone's strip (`tone.level` its gain, `tone.pan`, `tone.mute`, `tone.solo`) is `strip(.tone, …)`.
    public enum Tone: String, CaseIterable, Sendable { case frequency, waveform, enabled, note, a4 }
    /// The oscillator's strip (`osc.level` its gain, `osc.pan` …) is `strip(.oscillator, …)`.
    public enum Osc: String, CaseIterable, Sendable {
        case waveform, attack, decay, sustain, release, detune
    }

    /// The audio-file tracks that have strips (and so `track.N.*` parameters).
    public static let maxTracks = 8
}

// MARK: - Text form

extension ParameterAddress: CustomStringConvertible, LosslessStringConvertible {
    /// The address as written in mapping files, e.g. `strip.3.pan`.
    public var description: String {
        switch self {
        case .masterGain: "master.gain"
        case .strip(.channel(let c), let p): "strip.\(c.intValue + 1).\(p.rawValue)"
        // The oscillator's and the tone's gain keep their first name, `level`.
        case .strip(.oscillator, let p): "osc.\(p == .gain ? "level" : p.rawValue)"
        case .strip(.tone, let p): "tone.\(p == .gain ? "level" : p.rawValue)"
        case .strip(.reverb, let p): "strip.reverb.\(p.rawValue)"
        case .strip(.chorus, let p): "strip.chorus.\(p.rawValue)"
        case .strip(.track(let n), let p): "track.\(n + 1).\(p.rawValue)"
        case .reverb(let p): "synth.reverb.\(p.rawValue)"
        case .chorus(let p): "synth.chorus.\(p.rawValue)"
        case .channelCC(let c, let cc): "channel.\(c.intValue + 1).cc.\(cc.intValue)"
        case .channelProgram(let c): "channel.\(c.intValue + 1).program"
        case .channelPitchBend(let c): "channel.\(c.intValue + 1).pitch-bend"
        case .channelNote(let c): "channel.\(c.intValue + 1).note"
        case .channelGate(let c): "channel.\(c.intValue + 1).gate"
        case .transport(let p): "transport.\(p.rawValue)"
        case .tone(let p): "tone.\(p.rawValue)"
        case .osc(let p): "osc.\(p.rawValue)"
        case .sceneSelect: "scene.select"
        case .rigTranspose: "rig.transpose"
        case .plugin(let k): PluginParameters.row(k)?.name ?? "plugin.unregistered.\(k)"
        }
    }

    /// Parses the text form; nil for anything that is not exactly one address.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func channel(_ s: String) -> Channel? {
            guard let n = Int(s), (1...16).contains(n), String(n) == s else { return nil }
            return Channel(n - 1)
        }
        switch parts.first {
        case "master" where parts.count == 2 && parts[1] == "gain":
            self = .masterGain
        case "strip" where parts.count == 3:
            guard let p = StripParameter(rawValue: parts[2]) else { return nil }
            switch parts[1] {
            case "reverb": self = .strip(.reverb, p)
            case "chorus": self = .strip(.chorus, p)
            default:
                guard let c = channel(parts[1]) else { return nil }
                self = .strip(.channel(c), p)
            }
        case "synth" where parts.count == 3:
            if parts[1] == "reverb", let p = Reverb(rawValue: parts[2]) {
                self = .reverb(p)
            } else if parts[1] == "chorus", let p = Chorus(rawValue: parts[2]) {
                self = .chorus(p)
            } else {
                return nil
            }
        case "channel" where parts.count >= 3:
            guard let c = channel(parts[1]) else { return nil }
            switch (parts.count, parts[2]) {
            case (4, "cc"):
                guard let n = Int(parts[3]), String(n) == parts[3], let cc = UInt7(exactly: n) else { return nil }
                self = .channelCC(c, cc)
            case (3, "program"): self = .channelProgram(c)
            case (3, "pitch-bend"): self = .channelPitchBend(c)
            case (3, "note"): self = .channelNote(c)
            case (3, "gate"): self = .channelGate(c)
            default: return nil
            }
        case "transport" where parts.count == 2:
            guard let p = Transport(rawValue: parts[1]) else { return nil }
            self = .transport(p)
        case "scene" where parts.count == 2 && parts[1] == "select":
            self = .sceneSelect
        case "rig" where parts.count == 2 && parts[1] == "transpose":
            self = .rigTranspose
        case "tone" where parts.count == 2:
            if let p = Self.stripParameter(parts[1]) { self = .strip(.tone, p) }
            else if let p = Tone(rawValue: parts[1]) { self = .tone(p) }
            else { return nil }
        case "osc" where parts.count == 2:
            if let p = Self.stripParameter(parts[1]) { self = .strip(.oscillator, p) }
            else if let p = Osc(rawValue: parts[1]) { self = .osc(p) }
            else { return nil }
        case "track" where parts.count == 3:
            guard let n = Int(parts[1]), (1...Self.maxTracks).contains(n), String(n) == parts[1],
                  let p = StripParameter(rawValue: parts[2]) else { return nil }
            self = .strip(.track(n - 1), p)
        case "plugin", "insert", "fx":
            guard let address = PluginParameters.address(named: text) else { return nil }
            self = address
        default:
            return nil
        }
    }

    /// `osc.*` and `tone.*` strip names: `level` is the gain.
    private static func stripParameter(_ name: String) -> StripParameter? {
        name == "level" ? .gain : (name == "gain" ? nil : StripParameter(rawValue: name))
    }
}

// MARK: - Dense index

extension ParameterAddress {
    private static let stripBase = 1
    private static let reverbBase = stripBase + StripID.all.count * StripParameter.allCases.count
    private static let chorusBase = reverbBase + Reverb.allCases.count
    private static let ccBase = chorusBase + Chorus.allCases.count
    private static let programBase = ccBase + 16 * 128
    private static let pitchBendBase = programBase + 16
    private static let noteBase = pitchBendBase + 16
    private static let gateBase = noteBase + 16
    private static let transportBase = gateBase + 16
    private static let toneBase = transportBase + Transport.allCases.count
    private static let oscBase = toneBase + Tone.allCases.count
    private static let sceneSelectIndex = oscBase + Osc.allCases.count

    // The families' cases, built once: `allCases` makes a new array at each call.
    private static let strips = StripParameter.allCases, reverbs = Reverb.allCases, choruses = Chorus.allCases
    private static let transports = Transport.allCases, tones = Tone.allCases
    private static let oscs = Osc.allCases

    /// Where `value` stands in `cases`: a plain loop, because `firstIndex(of:)`
    /// allocates in debug builds and `index` runs on every parameter change.
    @inline(__always)
    private static func ordinal<T: Equatable>(_ value: T, in cases: [T]) -> Int {
        var i = 0
        while cases[i] != value { i += 1 }
        return i
    }

    private static let rigTransposeIndex = sceneSelectIndex + 1
    private static let pluginBase = rigTransposeIndex + 1

    /// How many addresses there is room for; every `index` is below this
    /// (the plugin rows' slots are reserved, registered or not).
    public static let count = pluginBase + PluginParameters.capacity

    /// A dense number in 0..<`count`, stable for a given build: the render
    /// thread's parameter store can be a flat array indexed by it.
    public var index: Int {
        switch self {
        case .masterGain: 0
        case .strip(let id, let p):
            Self.stripBase + id.ordinal * Self.strips.count + Self.ordinal(p, in: Self.strips)
        case .reverb(let p): Self.reverbBase + Self.ordinal(p, in: Self.reverbs)
        case .chorus(let p): Self.chorusBase + Self.ordinal(p, in: Self.choruses)
        case .channelCC(let c, let cc): Self.ccBase + c.intValue * 128 + cc.intValue
        case .channelProgram(let c): Self.programBase + c.intValue
        case .channelPitchBend(let c): Self.pitchBendBase + c.intValue
        case .channelNote(let c): Self.noteBase + c.intValue
        case .channelGate(let c): Self.gateBase + c.intValue
        case .transport(let p): Self.transportBase + Self.ordinal(p, in: Self.transports)
        case .tone(let p): Self.toneBase + Self.ordinal(p, in: Self.tones)
        case .osc(let p): Self.oscBase + Self.ordinal(p, in: Self.oscs)
        case .sceneSelect: Self.sceneSelectIndex
        case .rigTranspose: Self.rigTransposeIndex
        case .plugin(let k): Self.pluginBase + min(max(k, 0), PluginParameters.capacity - 1)
        }
    }

    /// The address with this dense index, nil outside 0..<`count`.
    public init?(index: Int) {
        switch index {
        case 0: self = .masterGain
        case Self.stripBase..<Self.reverbBase:
            let i = index - Self.stripBase, n = Self.strips.count
            self = .strip(StripID.all[i / n], Self.strips[i % n])
        case Self.reverbBase..<Self.chorusBase: self = .reverb(Self.reverbs[index - Self.reverbBase])
        case Self.chorusBase..<Self.ccBase: self = .chorus(Self.choruses[index - Self.chorusBase])
        case Self.ccBase..<Self.programBase:
            let i = index - Self.ccBase
            self = .channelCC(Channel(i / 128), UInt7(i % 128))
        case Self.programBase..<Self.pitchBendBase: self = .channelProgram(Channel(index - Self.programBase))
        case Self.pitchBendBase..<Self.noteBase: self = .channelPitchBend(Channel(index - Self.pitchBendBase))
        case Self.noteBase..<Self.gateBase: self = .channelNote(Channel(index - Self.noteBase))
        case Self.gateBase..<Self.transportBase: self = .channelGate(Channel(index - Self.gateBase))
        case Self.transportBase..<Self.toneBase: self = .transport(Self.transports[index - Self.transportBase])
        case Self.toneBase..<Self.oscBase: self = .tone(Self.tones[index - Self.toneBase])
        case Self.oscBase..<Self.sceneSelectIndex: self = .osc(Self.oscs[index - Self.oscBase])
        case Self.sceneSelectIndex: self = .sceneSelect
        case Self.rigTransposeIndex: self = .rigTranspose
        case Self.pluginBase..<Self.count:
            guard PluginParameters.row(index - Self.pluginBase) != nil else { return nil }
            self = .plugin(index - Self.pluginBase)
        default: return nil
        }
    }

    /// The built-in addresses, in index order (every build has them).
    public static let builtIn: [ParameterAddress] = (0..<pluginBase).map { ParameterAddress(index: $0)! }

    /// Every address: the built-in ones, then the plugin rows registered so far.
    public static var all: [ParameterAddress] { builtIn + PluginParameters.all }
}
