import MIDI
import MappingFiles
import Parameters

/// What each of the 16 channels plays, as far as the hub knows it: the
/// mapping's `channels:` at the start, then every bank select (CC 0) and
/// program change the hub sends (a preset picked on the page or by OSC, a
/// scene, a control on `channel.N.program`) at once, and what the engine
/// reports it applied (`ControlHub.engineDidSelectPreset`: whoever sent it, a
/// keyboard's program change straight to the sampler included), which has the
/// last word: a send the engine has not applied yet is overtaken by its report
/// and shown again when the engine applies it.
public struct ChannelPresets: Hashable, Sendable {
    /// One channel's bank (FluidSynth's number: 128 is the percussion bank) and program.
    public struct Entry: Hashable, Sendable {
        public var bank: Int
        public var program: Int
        public init(bank: Int, program: Int) { self.bank = bank; self.program = program }
    }

    /// Channel 1…16 at 0…15. A fresh synth: bank 0 program 0, channel 10 the percussion bank.
    public private(set) var entries: [Entry] = (0..<16).map { Entry(bank: $0 == 9 ? 128 : 0, program: 0) }
    /// Moves at every change (a view compares it and redraws only when it moved).
    public private(set) var generation = 0

    public init() {}

    /// The mapping's `channels:` presets (bank, program) as the synth starts with them.
    public init(mapping: ControlMapping?) {
        for setup in mapping?.channels ?? [] where setup.lv2 == nil && setup.instrument == nil {
            let c = setup.channel.intValue
            if let bank = setup.bank { entries[c].bank = bank }
            if let program = setup.program { entries[c].program = program.intValue }
        }
    }

    public subscript(channel: Channel) -> Entry { entries[channel.intValue] }

    /// Follows one parameter the hub published: a bank select (as FluidSynth's
    /// default `gs` style reads it: the drum channel ignores it) or a program change.
    mutating func follow(_ address: ParameterAddress, _ value: Double) {
        switch address {
        case .channelProgram(let c):
            entries[c.intValue].program = Int(value.rounded())
            generation += 1
        case .channelCC(let c, let cc) where cc.value == 0 && c.intValue != 9:
            entries[c.intValue].bank = Int(value.rounded())
            generation += 1
        default:
            break
        }
    }

    /// The engine plays `entry` on channel `c` (0…15): generation moves when it is news.
    mutating func set(_ c: Int, _ entry: Entry) {
        guard entries[c] != entry else { return }
        entries[c] = entry
        generation += 1
    }
}

extension ChannelPresets {
    /// Whether a bank select and program change on `channel` reach `preset`
    /// (FluidSynth's default `gs` style): channel 10 plays the drum kits (bank
    /// 128) and ignores bank select; the others, banks 0…127.
    public static func reaches(_ preset: FontPreset, _ channel: Channel) -> Bool {
        channel.intValue == 9 ? preset.bank == 128 : preset.bank <= 127
    }

    /// The preset `by` places after (before, when negative) the one `entry`
    /// plays, in the font's list in bank then program order, wrapping round:
    /// only those the channel reaches (`reaches`). Nil when the list has none.
    public static func step(from entry: Entry, by offset: Int, in presets: [FontPreset], channel: Channel) -> FontPreset? {
        let reachable = presets.filter { reaches($0, channel) }
        guard !reachable.isEmpty else { return nil }
        let key = { (p: FontPreset) in p.bank * 128 + p.program }
        let here = entry.bank * 128 + entry.program
        // Where the entry is, or would be, in the list.
        let at = reachable.firstIndex { key($0) >= here } ?? reachable.count
        let exact = at < reachable.count && key(reachable[at]) == here
        let start = exact ? at : (offset > 0 ? at - 1 : at)
        let n = reachable.count
        return reachable[((start + offset) % n + n) % n]
    }
}

extension ControlHub {
    /// What each channel plays, as the hub knows it (`ChannelPresets`). Any thread.
    public var channelPresets: ChannelPresets { lock.withLock { presets } }

    /// The engine's report (`ChannelSelectionsFollower`): the sampler's
    /// channel `channel` plays `bank`:`program` now, whoever selected it — a
    /// keyboard's program change straight to the sampler, a zone, a control,
    /// a scene, the page, OSC. The presets (`channelPresets`) and the values
    /// of `channel.N.program` and bank select follow; the controls follow
    /// as after `engineDidChange`, and the subscribers get the values that
    /// moved as changes `fromEngine` (the views and OSC show them; the engine's
    /// own subscriber sends nothing back). Any thread.
    public func engineDidSelectPreset(onChannel channel: Channel, bank: Int, program: Int) {
        lock.withLock {
            presets.set(channel.intValue, ChannelPresets.Entry(bank: bank, program: program))
            var moved: [(ParameterAddress, Double)] = []
            // Channel 10's bank 128 is its own (no bank select sets it).
            if bank <= 127 && channel.intValue != 9 { moved.append((.channelCC(channel, 0), Double(bank))) }
            moved.append((.channelProgram(channel), Double(program)))
            for (address, value) in moved where values[address] != value {
                subscribers.send(TimedParameterChange(ParameterChange(address, Float(value)), frame: nil, fromEngine: true))
                surface.parameterDidChange(address, value: value)  // records it in the shared values; the controls follow
            }
        }
    }

    /// The channels a rig plays, whose presets a view shows: the mapping's
    /// `channels:` (sampler channels only), its scenes' presets, its zones' own
    /// channels (top level and scenes), its groups' channel strips; all 16 when
    /// it names none (a GM setup). Any thread.
    public var soundChannels: [Channel] {
        let (mapping, groups) = lock.withLock { (currentMapping, ControlGroup.arrange(surface.definitions, order: currentMapping?.groups ?? [])) }
        var used = Set<Int>()
        if let mapping {
            for s in mapping.channels where s.lv2 == nil && s.instrument == nil { used.insert(s.channel.intValue) }
            for scene in mapping.scenes { for s in scene.channels { used.insert(s.channel.intValue) } }
            let zones = mapping.zones + mapping.scenes.flatMap { $0.zones ?? [] }
            for d in ZoneSummary.list(zones).flatMap(\.destinations) where d.port == nil { used.insert(d.channel - 1) }
        }
        for g in groups { if case .channel(let c)? = g.strip { used.insert(c.intValue) } }
        // Channels the mapping hands to another instrument have no presets to pick.
        for s in mapping?.channels ?? [] where s.lv2 != nil || s.instrument != nil { used.remove(s.channel.intValue) }
        return (used.isEmpty ? Array(0..<16) : used.sorted()).map { Channel(UInt8($0)) }
    }
}
