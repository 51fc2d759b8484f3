import Controls
import Engine
import LV2
import MIDI
import MappingFiles
import Parameters
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a session's LV2 plugins come from: the installed plugins (read once),
/// the URID map they share, and each plugin's control inputs as parameters
/// (`plugin.N.SYMBOL`, `insert.STRIP.K.SYMBOL`, a zone's `midi-fx` `fx.ZONE.K.SYMBOL`, registered in
/// `PluginParameters` when the host is made). One per job or live session,
/// used from its owner's thread (lilv's world is not thread-safe); the
/// plugins it makes run on the render thread.
public final class PluginHost {
    public let world: LV2World
    public let urids = URIDMap()
    /// The instruments and inserts the renderers' plugins are made from (as
    /// asked at start, with the replacements `change` has swapped in since).
    public private(set) var instruments: [InstrumentSpec]
    public private(set) var inserts: [InsertSpec]
    /// The zones' MIDI effect chains (`midi-fx`) at the start: a zone's chain
    /// is `midiEffects`' index (`ZoneSet(_:effects:)`); a reload places its own
    /// (`KeyboardRouting.placeEffects`), their controls readied by `prepareChange`.
    public let midiEffects: [MIDIEffectSpec]
    /// The plugins whose controls are registered for each chain's parameter key (`fx.ZONE`).
    private var effectPlugins: [String: [String]] = [:]
    /// Where the live chains' messages for external ports wait to be sent (`KeyboardRouting.sendEffectPortMessages`).
    public let effectPorts = MIDIEffectPorts()
    /// Each instrument's name, by its MIDI channel (0-based).
    public private(set) var instrumentNames: [Int: String] = [:]
    /// What was said about the plugins at load (an instrument's outputs beyond the first two).
    public private(set) var notes: [String] = []
    /// Per plugin (by its parameter prefix): its control inputs' places in `info.controls`, with their addresses.
    private var bindings: [String: [PluginControls.Binding]] = [:]
    /// `--plugin-state DIR`: where each plugin's state is read at start and written by `saveStates`.
    public let stateDirectory: String?
    /// The states read from `stateDirectory`, by parameter prefix.
    private var states: [String: LV2State] = [:]
    /// The saved control values, as the parameters' start values (before `--set`'s).
    public private(set) var stateValues: [ParameterChange] = []
    /// The instances made, by prefix, for `saveStates` (the renderer owns them).
    private var made: [(prefix: String, instance: Weak)] = []
    private struct Weak { weak var instance: LV2Instance? }

    /// Reads the installed plugins, checks every one asked for before anything
    /// runs (installed, usable where it goes, no feature Carillon lacks) and
    /// registers their controls as parameters. No instance is made here: each
    /// renderer makes its own.
    /// `stateDirectory`: each plugin's saved state (`PREFIX.ttl`, e.g. `plugin.3.ttl`)
    /// is read from there if present: its control values become start values,
    /// the rest is handed to every instance before it runs.
    /// `midiEffects`: the zones' `midi-fx` chains; each plugin must be
    /// installed and take MIDI in and give MIDI out (the error names the zone).
    public init(instruments: [InstrumentSpec], inserts: [InsertSpec], midiEffects: [MIDIEffectSpec] = [],
                stateDirectory: String? = nil) throws(LV2Error) {
        world = try LV2World()
        self.instruments = instruments
        self.inserts = inserts
        self.midiEffects = midiEffects
        self.stateDirectory = stateDirectory
        for spec in instruments {
            let info = try world.plugin(uri: spec.uri)
            try LV2ChannelInstrument.check(info)
            instrumentNames[spec.channel] = info.name
            if info.audioOutputs > 2 {
                notes.append("channel \(spec.channel + 1): \(info.name) has \(info.audioOutputs) audio outputs; its first two are the channel's left and right")
            }
            try register(info, prefix: spec.parameterPrefix, drives: "\(info.name) on MIDI channel \(spec.channel + 1)",
                         strip: .channel(Channel(spec.channel)))
        }
        for (k, spec) in inserts.enumerated() {
            let info = try world.plugin(uri: spec.uri)
            try LV2Insert.check(info)
            let strip: ParameterAddress.StripID? = if case .strip(let id) = spec.strip { id } else { nil }
            try register(info, prefix: parameterPrefix(insert: k), drives: "\(info.name), insert \(spec.strip.key)",
                         strip: strip)
        }
        try registerMIDIEffects()
    }

    /// Checks and registers the zones' MIDI effects (from `init`).
    private func registerMIDIEffects() throws(LV2Error) {
        for spec in midiEffects {
            for (k, uri) in spec.uris.enumerated() {
                let info = try midiEffectPlugin(uri, of: spec)
                try register(info, prefix: spec.parameterPrefix(k),
                             drives: "\(info.name), midi-fx \(k + 1) of zone \(spec.zoneLabel)", strip: nil)
            }
            effectPlugins[spec.key] = spec.uris
        }
    }

    /// Zone `spec.zoneLabel`'s plugin `uri`, looked up and checked as a MIDI effect.
    private func midiEffectPlugin(_ uri: String, of spec: MIDIEffectSpec) throws(LV2Error) -> LV2PluginInfo {
        try Self.midiEffectPlugin(uri, zone: spec.zoneLabel, in: world)
    }

    /// `uri` looked up in `world` and checked as a MIDI effect (errors name no zone).
    static func midiEffectInfo(_ uri: String, in world: LV2World) throws(LV2Error) -> LV2PluginInfo {
        try midiEffectPlugin(uri, zone: "", in: world)
    }

    private static func midiEffectPlugin(_ uri: String, zone: String, in world: LV2World) throws(LV2Error) -> LV2PluginInfo {
        let info: LV2PluginInfo
        do { info = try world.plugin(uri: uri) } catch {
            var problem = "no LV2 plugin with this URI is installed"
            if case .unknownPlugin(_, let suggestions) = error.kind, !suggestions.isEmpty {
                problem += " (did you mean \(suggestions.joined(separator: ", "))?)"
            }
            problem += "; `carillon plugins MIDI` lists the installed MIDI plugins (LV2_PATH says where to look)"
            throw LV2Error(kind: .midiEffect(zone: zone, uri: uri, problem: problem), function: "lilv_plugins_get_by_uri")
        }
        try MIDIEffectChain.check(info, zone: zone)
        return info
    }

    /// Makes every mapping load check its `midi-fx` URIs against the installed
    /// plugins (`ControlMapping.checkMIDIEffects`), so a URI not installed or
    /// not a MIDI effect is a `file:line:column` mistake with the file's others,
    /// and `MIDIEffectSpec.all(in:)` leaves its zone out of what is registered
    /// before the load. One plugin world for the process, made at the first
    /// URI checked (about 10 ms: `lv2ls`'s load); a mapping without `midi-fx` makes none.
    public static func checkMIDIEffectsAtLoad() {
        ControlMapping.checkMIDIEffects { midiEffectChecker.problem($0) }
    }

    private static let midiEffectChecker = MIDIEffectChecker()

    /// A new, activated chain of zone effect `k` (`midiEffects[k]`), for
    /// blocks of up to `maxFrames`, its controls read from `parameters` each
    /// block; `offline`: it free-wheels (a render).
    public func makeMIDIEffect(_ k: Int, sampleRate: Int, maxFrames: Int, offline: Bool,
                               parameters: ParameterStore) throws(LV2Error) -> any MIDIEffect {
        try makeMIDIEffect(midiEffects[k], sampleRate: sampleRate, maxFrames: maxFrames, offline: offline, parameters: parameters)
    }

    /// The same for `spec`, one of `midiEffects` or of a reload's (`prepareChange` readied its controls).
    public func makeMIDIEffect(_ spec: MIDIEffectSpec, sampleRate: Int, maxFrames: Int, offline: Bool,
                               parameters: ParameterStore) throws(LV2Error) -> any MIDIEffect {
        try MIDIEffectChain(host: self, spec: spec, sampleRate: sampleRate, maxFrames: maxFrames, offline: offline,
                            controls: spec.uris.indices.map { bindings[spec.parameterPrefix($0)] ?? [] },
                            parameters: parameters, ports: offline ? nil : effectPorts)
    }

    /// The parameters of zone effect `k`'s plugins, in order.
    public func parameters(midiEffect k: Int) -> [ParameterAddress] {
        midiEffects[k].uris.indices.flatMap { (bindings[midiEffects[k].parameterPrefix($0)] ?? []).map(\.address) }
    }

    /// `insert.STRIP.K`: K counts the inserts on that strip from 1.
    private func parameterPrefix(insert k: Int) -> String {
        let strip = inserts[k].strip
        let place = inserts[..<k].filter { $0.strip == strip }.count + 1
        return "insert.\(strip.key).\(place)"
    }

    /// The control inputs of `info` as rows `PREFIX.SYMBOL` (the free-wheeling
    /// port excepted: the host sets it); `readsState`: its saved state too
    /// (at start; a plugin swapped in later starts at its defaults).
    private func register(_ info: LV2PluginInfo, prefix: String, drives: String,
                          strip: ParameterAddress.StripID?, readsState: Bool = true) throws(LV2Error) {
        var places: [Int] = [], rows: [PluginParameters.Row] = []
        for (k, control) in info.controls.enumerated() where control.isInput && k != info.freeWheelingControl {
            places.append(k)
            rows.append(Self.row(control, name: "\(prefix).\(control.symbol)", drives: "\(drives): \(control.name)", strip: strip))
        }
        let addresses: [ParameterAddress]
        do { addresses = try PluginParameters.register(rows) } catch {
            throw LV2Error(kind: .unsuitable(plugin: info.uri, reason: error.description), function: "PluginParameters.register")
        }
        bindings[prefix] = zip(places, addresses).map { PluginControls.Binding(control: $0, address: $1) }
        guard readsState, let stateDirectory else { return }
        let path = "\(stateDirectory)/\(prefix).ttl"
        guard access(path, F_OK) == 0 else { return }
        let state = try LV2State(path: path, world: world, urids: urids)
        guard state.pluginURI == info.uri else {
            notes.append("\(path) holds the state of \(state.pluginURI), not of \(info.uri) (\(prefix)): not restored, and written over at the end")
            return
        }
        states[prefix] = state
        let bySymbol = Dictionary(zip(places.map { info.controls[$0].symbol }, addresses), uniquingKeysWith: { a, _ in a })
        for (symbol, value) in state.portValues.sorted(by: { $0.key < $1.key }) {
            if let address = bySymbol[symbol] { stateValues.append(ParameterChange(address, value)) }
        }
    }

    /// What a mapping reload changes among the plugins (`prepareChange`).
    public struct Changes {
        /// Channels whose instrument is another plugin now: make each anew and swap it in.
        public var instruments: [InstrumentSpec] = []
        /// Inserts (their place in `inserts`) that are another plugin now, with the new ones.
        public var inserts: [(k: Int, spec: InsertSpec)] = []
        /// The new plugins' controls, to start at their defaults.
        public var parameters: [ParameterAddress] = []
        /// What only a restart does (a plugin added or removed), as lines to show.
        public var notApplied: [String] = []
        /// The plugins replaced, to register their controls again (`revert`).
        fileprivate var replaced: [(info: LV2PluginInfo, prefix: String, drives: String, strip: ParameterAddress.StripID?)] = []
        /// Chains (by parameter key) whose plugins are others now, with them; `revert` puts the old ones back.
        fileprivate var effectPlugins: [(key: String, uris: [String], before: [String]?)] = []
        public var isEmpty: Bool { instruments.isEmpty && inserts.isEmpty }
    }

    /// Readies another set of plugins (a mapping reloaded) where a running
    /// session can take it: a channel's instrument or a strip's insert that is
    /// another plugin now is read and checked, and its controls registered (so
    /// the new mapping may name them). Nothing else changes until `commit`;
    /// `revert` puts the old controls back. Instruments or inserts added or
    /// removed wait for the next start (`notApplied`). A zone's `midi-fx`
    /// (`midiEffects`: the file's, `MIDIEffectSpec.all(in: [MappingMIDIEffects])`)
    /// whose plugins are others than its key's had get theirs registered; its
    /// chain is made when the reload places it (`PluginSlots.swapMIDIEffects`).
    /// A new plugin that is missing or unusable throws, and nothing changes.
    public func prepareChange(instruments newInstruments: [InstrumentSpec], inserts newInserts: [InsertSpec],
                              midiEffects newEffects: [MIDIEffectSpec] = []) throws(LV2Error) -> Changes {
        var changes = Changes()
        var found: [(info: LV2PluginInfo, prefix: String, drives: String, strip: ParameterAddress.StripID?)] = []
        for channel in Set(instruments.map(\.channel) + newInstruments.map(\.channel)).sorted() {
            let old = instruments.first { $0.channel == channel }, new = newInstruments.first { $0.channel == channel }
            guard let old, let new else {
                changes.notApplied.append("channel \(channel + 1): an LV2 instrument \(old == nil ? "added" : "removed") takes effect at the next start")
                continue
            }
            guard new.uri != old.uri else { continue }
            let info = try world.plugin(uri: new.uri), before = try world.plugin(uri: old.uri)
            try LV2ChannelInstrument.check(info)
            let strip = ParameterAddress.StripID.channel(Channel(channel))
            found.append((info, new.parameterPrefix, "\(info.name) on MIDI channel \(channel + 1)", strip))
            changes.replaced.append((before, new.parameterPrefix, "\(before.name) on MIDI channel \(channel + 1)", strip))
            changes.instruments.append(new)
        }
        for key in Set((inserts + newInserts).map(\.strip.key)).sorted() {
            let old = inserts.indices.filter { inserts[$0].strip.key == key }, new = newInserts.filter { $0.strip.key == key }
            guard old.count == new.count else {
                changes.notApplied.append("\(key == "master" ? "the master" : "strip \(key)"): inserts added or removed take effect at the next start")
                continue
            }
            for (k, spec) in zip(old, new) where spec.uri != inserts[k].uri {
                let info = try world.plugin(uri: spec.uri), before = try world.plugin(uri: inserts[k].uri)
                try LV2Insert.check(info)
                let strip: ParameterAddress.StripID? = if case .strip(let id) = spec.strip { id } else { nil }
                found.append((info, parameterPrefix(insert: k), "\(info.name), insert \(key)", strip))
                changes.replaced.append((before, parameterPrefix(insert: k), "\(before.name), insert \(key)", strip))
                changes.inserts.append((k, spec))
            }
        }
        for spec in newEffects where effectPlugins[spec.key] != spec.uris {
            let before = effectPlugins[spec.key]
            for (k, uri) in spec.uris.enumerated() {
                let info = try midiEffectPlugin(uri, of: spec)
                let drives = "\(info.name), midi-fx \(k + 1) of zone \(spec.zoneLabel)"
                found.append((info, spec.parameterPrefix(k), drives, nil))
                if let before, k < before.count, let old = try? world.plugin(uri: before[k]) {
                    changes.replaced.append((old, spec.parameterPrefix(k), "\(old.name), midi-fx \(k + 1) of zone \(spec.zoneLabel)", nil))
                }
            }
            changes.effectPlugins.append((spec.key, spec.uris, before))
        }
        // Every new plugin was found and fits: now their controls are rows.
        for plugin in found {
            try register(plugin.info, prefix: plugin.prefix, drives: plugin.drives, strip: plugin.strip, readsState: false)
            changes.parameters += bindings[plugin.prefix]?.map(\.address) ?? []
        }
        return changes
    }

    /// The plugins `changes` readied are the ones the renderers' plugins are made from now.
    public func commit(_ changes: Changes) {
        for spec in changes.instruments {
            if let k = instruments.firstIndex(where: { $0.channel == spec.channel }) { instruments[k] = spec }
            instrumentNames[spec.channel] = try? world.plugin(uri: spec.uri).name
            forget(prefix: spec.parameterPrefix)
        }
        for (k, spec) in changes.inserts {
            inserts[k] = spec
            forget(prefix: parameterPrefix(insert: k))
        }
        for (key, uris, before) in changes.effectPlugins {
            effectPlugins[key] = uris
            for k in 0..<max(uris.count, before?.count ?? 0) { forget(prefix: "\(key).\(k + 1)") }
        }
    }

    /// The mapping that asked for `changes` was not taken: the old plugins' controls are the rows again.
    public func revert(_ changes: Changes) {
        for old in changes.replaced {
            _ = try? register(old.info, prefix: old.prefix, drives: old.drives, strip: old.strip, readsState: false)
        }
    }

    /// A plugin replaced under `prefix`: its state (read at start, for the
    /// plugin that was there) and its instances are no longer this prefix's.
    private func forget(prefix: String) {
        states[prefix] = nil
        made.removeAll { $0.prefix == prefix }
    }

    /// Writes every live instance's state to `stateDirectory` (one `PREFIX.ttl`
    /// each); returns the files written. Only while no render thread runs them.
    public func saveStates() throws(LV2Error) -> [String] {
        guard let stateDirectory else { return [] }
        var written: [String] = []
        for entry in made {
            guard let instance = entry.instance.instance, !written.contains("\(stateDirectory)/\(entry.prefix).ttl") else { continue }
            try instance.saveState(directory: stateDirectory, file: "\(entry.prefix).ttl")
            written.append("\(stateDirectory)/\(entry.prefix).ttl")
        }
        return written
    }

    /// Hands a new instance its saved state and keeps it for `saveStates`. Before it is activated.
    func prepare(_ instance: LV2Instance, prefix: String) {
        if let state = states[prefix] { instance.restore(state) }
        // The newest instance under a prefix is the one whose state is saved (a reload's new chain, not the one it replaced).
        made.removeAll { $0.prefix == prefix }
        made.append((prefix, Weak(instance: instance)))
    }

    /// A control port's parameter row: its range (0…1 where the plugin gives
    /// none), default, unit, and kind (toggle; integer or an enumeration of
    /// whole numbers: integer).
    static func row(_ control: LV2PluginInfo.Control, name: String, drives: String,
                    strip: ParameterAddress.StripID?) -> PluginParameters.Row {
        let a = Double(control.minimum ?? 0), b = Double(control.maximum ?? max(1, control.minimum ?? 0))
        let range = min(a, b)...max(a, b)
        let wholeSteps = control.scalePoints.allSatisfy { $0.value == $0.value.rounded() }
        let kind: ParameterInfo.Kind = control.toggle ? .toggle
            : (control.integer || (control.enumeration && wholeSteps && !control.scalePoints.isEmpty)) ? .integer : .continuous
        let unit = control.unit.flatMap { ParameterUnit.namesInFiles[$0] } ?? .none
        var text = drives
        if !control.scalePoints.isEmpty, control.scalePoints.count <= 16 {
            text += " (" + control.scalePoints.map { "\($0.value == $0.value.rounded() ? String(Int($0.value)) : String($0.value)) \($0.label)" }.joined(separator: ", ") + ")"
        }
        return PluginParameters.Row(name: name, range: range, defaultValue: Double(control.defaultValue ?? Float(range.lowerBound)),
                                    kind: kind, unit: unit, drives: text, strip: strip)
    }

    /// The parameters of channel `channel`'s instrument (0-based), in its control inputs' order.
    public func parameters(instrument spec: InstrumentSpec) -> [ParameterAddress] {
        (bindings[spec.parameterPrefix] ?? []).map(\.address)
    }

    /// A new, activated instance of `spec`'s instrument, its controls read
    /// from `parameters` each block; `offline`: it free-wheels (a render).
    public func makeInstrument(_ spec: InstrumentSpec, sampleRate: Int, maxFrames: Int, offline: Bool,
                               parameters: ParameterStore) throws(LV2Error) -> any ChannelPlugin {
        try LV2ChannelInstrument(host: self, uri: spec.uri, channel: spec.channel, sampleRate: sampleRate, maxFrames: maxFrames,
                                 offline: offline, controls: bindings[spec.parameterPrefix] ?? [], parameters: parameters,
                                 prefix: spec.parameterPrefix)
    }

    /// A new, activated instance of insert `k` (`inserts[k]`) for blocks of up
    /// to `maxFrames`, its controls read from `parameters` each block;
    /// `offline`: it free-wheels (a render).
    public func makeInsert(_ k: Int, sampleRate: Int, maxFrames: Int, offline: Bool,
                           parameters: ParameterStore) throws(LV2Error) -> any AudioInsert {
        try LV2Insert(host: self, uri: inserts[k].uri, sampleRate: sampleRate, maxFrames: maxFrames, offline: offline,
                      controls: bindings[parameterPrefix(insert: k)] ?? [], parameters: parameters, prefix: parameterPrefix(insert: k))
    }
}

/// `--instrument N=URI`: an LV2 instrument plays MIDI channel N (1…16) into its strip.
public struct InstrumentSpec: Hashable, Sendable, CustomStringConvertible {
    /// 0-based.
    public var channel: Int
    public var uri: String

    public init(channel: Int, uri: String) { self.channel = channel; self.uri = uri }

    /// `N=URI`, N 1…16.
    public init?(_ text: String) {
        guard let eq = text.firstIndex(of: "="), let n = Int(text[..<eq]), (1...16).contains(n),
              String(n) == text[..<eq] else { return nil }
        let uri = String(text[text.index(after: eq)...])
        guard !uri.isEmpty else { return nil }
        self.init(channel: n - 1, uri: uri)
    }

    /// `plugin.N`: its controls are `plugin.N.SYMBOL`.
    public var parameterPrefix: String { "plugin.\(channel + 1)" }

    public var description: String { "\(channel + 1)=\(uri)" }
}

/// `--insert STRIP=URI`: an LV2 effect on the master or on a strip, before
/// its gain, pan and meters. Inserts on one strip run in the order given.
public struct InsertSpec: Hashable, Sendable, CustomStringConvertible {
    /// Where an insert goes: the master or one strip (`STRIP` in `--insert STRIP=URI`).
    public enum Place: Hashable, Sendable {
        case master
        /// A MIDI channel's strip, the oscillator's, the tone's or a track's.
        case strip(ParameterAddress.StripID)

        /// `master`, `1`…`16`, `osc`, `tone`, `track1`…`track8`.
        public init?(_ key: String) {
            if key == "master" { self = .master; return }
            guard let id = ParameterAddress.StripID.all.first(where: { $0.key == key }), id != .reverb, id != .chorus
            else { return nil }
            self = .strip(id)
        }

        public var key: String {
            switch self {
            case .master: "master"
            case .strip(let id): id.key
            }
        }
    }

    public var strip: Place
    public var uri: String

    public init(strip: Place, uri: String) { self.strip = strip; self.uri = uri }

    /// `STRIP=URI`.
    public init?(_ text: String) {
        guard let eq = text.firstIndex(of: "="), let strip = Place(String(text[..<eq])) else { return nil }
        let uri = String(text[text.index(after: eq)...])
        guard !uri.isEmpty else { return nil }
        self.init(strip: strip, uri: uri)
    }

    /// A mapping's insert (its strip key checked when the file was read).
    public init?(_ insert: MappingInsert) {
        guard let strip = Place(insert.strip) else { return nil }
        self.init(strip: strip, uri: insert.uri)
    }

    public var description: String { "\(strip.key)=\(uri)" }
}

extension ControlMapping {
    /// The LV2 plugins a mapping file names (its `lv2:` channels and its
    /// `inserts:`), found before the file is read: their controls must be
    /// parameters by then.
    public static func plugins(path: String) -> (instruments: [InstrumentSpec], inserts: [InsertSpec]) {
        let found = lv2Plugins(path: path)
        return (found.instruments.map { InstrumentSpec(channel: $0.channel, uri: $0.uri) }, found.inserts.compactMap(InsertSpec.init))
    }
}

/// `PluginHost.checkMIDIEffectsAtLoad`'s check: one plugin world (made at the
/// first URI), the answer per URI kept. A world that cannot be made checks
/// nothing (the host says why when it starts).
private final class MIDIEffectChecker: @unchecked Sendable {
    private let lock = Mutex<(world: LV2World?, tried: Bool, answers: [String: String?])>((nil, false, [:]))
    // `answers[uri]` is a `String??`: nil, not asked yet; `.some(nil)`, usable.

    func problem(_ uri: String) -> String? {
        lock.withLock { (s: inout (world: LV2World?, tried: Bool, answers: [String: String?])) -> String? in
            if let known = s.answers[uri] { return known }
            if !s.tried { s.tried = true; s.world = try? LV2World() }
            guard let world = s.world else { return nil }
            var answer: String?
            do throws(LV2Error) { _ = try PluginHost.midiEffectInfo(uri, in: world) } catch {
                if case .midiEffect(_, _, let problem) = error.kind { answer = problem } else { answer = error.description }
            }
            s.answers[uri] = answer
            return answer
        }
    }
}
