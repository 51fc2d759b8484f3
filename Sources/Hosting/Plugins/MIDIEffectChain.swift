import Controls
import Engine
import LV2
import MIDI
import MappingFiles
import Rig

/// A zone's `midi-fx`: LV2 MIDI plugins in order (atom-sequence MIDI in →
/// atom-sequence MIDI out), run block by block on the sample clock. The zone's
/// messages (matched and changed by the zone: transposed, reshaped, on its
/// first destination's channel) come in at their offsets; each plugin's
/// output is the next one's input at the same frames; the last one's is sent
/// to every destination of the zone, each on its own channel (an external
/// port's queued in `MIDIEffectPorts` for the control loop to send).
///
/// No stuck notes: the chain counts the notes it sent (by channel and key, as
/// the last plugin sent them) and keeps its destinations for life, so a
/// plugin's note-off reaches where its note-on went. An All Notes Off or All
/// Sound Off coming in (CC 123, 120 — the router's mode messages, or
/// `KeyboardRouting` when a scene no longer uses the chain or a source
/// disconnects) goes to the plugins and, after the block's output, sends a
/// note-off for every note the chain still holds.
///
/// Threads: made off the render thread; `receive` and `process` on the render
/// thread (live) or the take's pass (offline): no allocation, lock or log.
final class MIDIEffectChain: MIDIEffect {
    let instances: [LV2Instance]
    private let count: Int
    private let controls: [PluginControls]
    /// The zone's destinations: Carillon's channels (0-based).
    private let destinations: UnsafeMutablePointer<UInt8>
    private let destinationCount: Int
    /// The zone's external ports: their numbers in `ports` and channels (0-based); live only.
    private let portDestinations: UnsafeMutablePointer<(port: UInt8, channel: UInt8)>
    private let portCount: Int
    private let ports: MIDIEffectPorts?
    /// Per channel and key: the notes the last plugin has on (its note-ons less its note-offs).
    private let sounding: UnsafeMutablePointer<UInt8>
    /// An All Notes Off came in this block (at this offset; -1: none): release what the chain holds there.
    private var releaseAt = -1

    /// `ports`: where the zone's external ports' messages go (nil: they are dropped, as offline).
    init(host: PluginHost, spec: MIDIEffectSpec, sampleRate: Int, maxFrames: Int, offline: Bool,
         controls bindings: [[PluginControls.Binding]], parameters: ParameterStore, ports: MIDIEffectPorts?) throws(LV2Error) {
        var instances: [LV2Instance] = [], controls: [PluginControls] = []
        for (k, uri) in spec.uris.enumerated() {
            let instance = try LV2Instance(world: host.world, uri: uri, sampleRate: Double(sampleRate), maxFrames: maxFrames,
                                           urids: host.urids, offline: offline)
            try Self.check(instance.info, zone: spec.zone)
            if let f = instance.info.freeWheelingControl { instance.setControl(at: f, to: offline ? 1 : 0) }
            host.prepare(instance, prefix: spec.parameterPrefix(k))
            instance.activate()
            instances.append(instance)
            controls.append(PluginControls(k < bindings.count ? bindings[k] : [], instances: [instance], store: parameters))
        }
        self.instances = instances
        count = instances.count
        self.controls = controls
        destinationCount = spec.channels.count
        destinations = .allocate(capacity: max(1, destinationCount))
        for k in 0..<destinationCount { destinations[k] = spec.channels[k].value }
        let numbered = ports.map { ports in spec.ports.compactMap { p in ports.number(of: p.name).map { ($0, p.channel.value) } } } ?? []
        guard numbered.count == (ports == nil ? 0 : spec.ports.count) else {
            throw LV2Error(kind: .midiEffect(zone: spec.zoneLabel, uri: spec.uris.first ?? "", problem:
                "more than \(MIDIEffectPorts.capacity) external ports for the zones' midi-fx in one session"), function: "MIDIEffectChain")
        }
        portCount = numbered.count
        portDestinations = .allocate(capacity: max(1, portCount))
        for (k, d) in numbered.enumerated() { portDestinations[k] = (d.0, d.1) }
        self.ports = ports
        sounding = .allocate(capacity: 16 * 128)
        sounding.initialize(repeating: 0, count: 16 * 128)
    }

    deinit {
        destinations.deallocate()
        portDestinations.deallocate()
        sounding.deallocate()
    }

    /// A MIDI effect: a MIDI input and a MIDI output, and no feature Carillon lacks.
    static func check(_ info: LV2PluginInfo, zone: String) throws(LV2Error) {
        do { try LV2Instance.checkFeatures(info) } catch {
            throw LV2Error(kind: .midiEffect(zone: zone, uri: info.uri, problem: error.description), function: "MIDIEffectChain")
        }
        guard info.midiInputs > 0, info.midiOutputs > 0 else {
            throw LV2Error(kind: .midiEffect(zone: zone, uri: info.uri, problem: "\(info.name) is not a MIDI effect: it has"
                + " \(info.midiInputs) MIDI input\(info.midiInputs == 1 ? "" : "s") and \(info.midiOutputs) MIDI output\(info.midiOutputs == 1 ? "" : "s")"
                + " (midi-fx takes plugins with MIDI in and MIDI out"
                + (info.kind == .effect ? "; an audio effect goes in inserts:" : info.kind == .instrument ? "; an instrument plays a channel: channels: { N: { lv2: URI } }" : "")
                + "); `carillon plugins MIDI` lists the MIDI plugins"), function: "MIDIEffectChain")
        }
    }

    // Indexing only on the render thread: `first`, `last` and iterators are
    // generic, and unspecialised (debug) code made heap calls for them (measured).
    func receive(_ message: ChannelMessage, at offset: Int) {
        guard count > 0 else { return }
        let first = instances[0]
        let kind = message.status & 0xF0
        if kind == 0xB0 && (message.data1 == 123 || message.data1 == 120) { releaseAt = max(releaseAt, min(max(0, offset), first.maxFrames - 1)) }
        first.appendMIDI(frame: min(max(0, offset), first.maxFrames - 1), status: message.status, message.data1, message.data2,
                         count: kind == 0xC0 || kind == 0xD0 ? 2 : 3)
    }

    func process(frames: Int, into output: UnsafeMutableBufferPointer<TimedMessage>) -> Int {
        for k in 0..<count {
            controls[k].update()
            let instance = instances[k]
            instance.run(frames: frames)
            if k + 1 < count {
                // Its output is the next plugin's input, at the same frames.
                let next = instances[k + 1]
                var position = 0
                while let e = instance.nextMIDIOutput(after: position) {
                    position = e.next
                    guard e.status >= 0x80 && e.status < 0xF0 else { continue }
                    next.appendMIDI(frame: min(max(0, e.frame), frames - 1), status: e.status, e.data1, e.data2, count: e.count)
                }
            }
        }
        var written = 0
        if count > 0 {
            let last = instances[count - 1]
            var position = 0
            while let e = last.nextMIDIOutput(after: position) {
                position = e.next
                guard e.status >= 0x80 && e.status < 0xF0 else { continue }
                let frame = min(max(0, e.frame), frames - 1)
                let kind = e.status & 0xF0, index = Int(e.status & 0x0F) * 128 + Int(e.data1 & 0x7F)
                if kind == 0x90 && e.data2 > 0 {
                    if sounding[index] < 255 { sounding[index] += 1 }
                } else if kind == 0x80 || kind == 0x90 {
                    if sounding[index] > 0 { sounding[index] -= 1 }
                }
                written = send(status: e.status, e.data1, e.data2, frame: frame, into: output, at: written)
            }
        }
        if releaseAt >= 0 {
            let frame = min(releaseAt, frames - 1)
            releaseAt = -1
            for index in 0..<(16 * 128) where sounding[index] > 0 {
                let status = 0x80 | UInt8(index >> 7), key = UInt8(index & 127)
                while sounding[index] > 0 {
                    sounding[index] -= 1
                    written = send(status: status, key, 0, frame: frame, into: output, at: written)
                }
            }
        }
        return written
    }

    /// Notes the chain has on (its last plugin's note-ons less its note-offs). Off the render thread, while it does not run.
    var soundingNotes: Int {
        var n = 0
        for i in 0..<(16 * 128) { n += Int(sounding[i]) }
        return n
    }

    /// The message on each destination's channel, from `at` in `output`, and to
    /// each external port (queued for the sender); returns where the next goes in `output`.
    @inline(__always)
    private func send(status: UInt8, _ data1: UInt8, _ data2: UInt8, frame: Int,
                      into output: UnsafeMutableBufferPointer<TimedMessage>, at start: Int) -> Int {
        var i = start
        for d in 0..<destinationCount where i < output.count {
            let message = ChannelMessage(status: (status & 0xF0) | destinations[d], data1: data1, data2: data2)
            output[i] = TimedMessage(frame: UInt64(frame), message: message)
            i += 1
        }
        if let ports {
            for d in 0..<portCount {
                let p = portDestinations[d]
                ports.push(ChannelMessage(status: (status & 0xF0) | p.channel, data1: data1, data2: data2), port: p.port)
            }
        }
        return i
    }
}

/// A zone's `midi-fx` as the host makes it: the zone (the top level's, or a
/// scene's own), its plugins in order and the destinations its output goes to.
public struct MIDIEffectSpec: Hashable, Sendable {
    /// The scene whose own `zones:` list the zone (its place and name); nil: the top level's.
    public var scene: Int?
    public var sceneName: String?
    public var zone: String
    public var uris: [String]
    /// The zone's destinations among Carillon's channels.
    public var channels: [Channel]
    /// The zone's external ports (`to: { port: NAME, channel: C }`), each with its channel.
    public var ports: [Port]
    /// The channel the zone's messages go into the chain on: its first destination's.
    public var inputChannel: Channel
    public struct Port: Hashable, Sendable {
        public var name: String
        public var channel: Channel
        public init(name: String, channel: Channel) { self.name = name; self.channel = channel }
    }
    /// `fx.ZONE` or `fx.SCENE.ZONE` (names as keys: lower case, a dash for any run of other characters).
    public var key: String

    /// `destinations`: the zone's, in order (its messages go into the chain on the first one's channel).
    public init(scene: Int? = nil, sceneName: String? = nil, zone: String, uris: [String], destinations: [Zone.Destination]) {
        self.scene = scene; self.sceneName = sceneName; self.zone = zone; self.uris = uris
        channels = destinations.compactMap { if case .channel(let c) = $0 { c } else { nil } }
        ports = destinations.compactMap { if case .port(let name, let c) = $0 { Port(name: name, channel: c) } else { nil } }
        inputChannel = switch destinations.first { case .channel(let c): c; case .port(_, let c): c; case nil: Channel(0) }
        key = "fx." + (scene.map { _ in Self.key(sceneName ?? "scene\(scene! + 1)") + "." } ?? "") + Self.key(zone)
    }

    /// Plugin `k`'s (0-based) parameters: `KEY.K.SYMBOL`, K from 1; its state file `KEY.K.ttl`.
    public func parameterPrefix(_ k: Int) -> String { "\(key).\(k + 1)" }

    /// The zone, for messages: `Chords` or `Chords (scene Verse)`.
    public var zoneLabel: String { zone + (sceneName.map { " (scene \($0))" } ?? scene.map { " (scene \($0 + 1))" } ?? "") }

    /// A name as a parameter key: lower case letters and digits, a dash for each run of anything else.
    static func key(_ name: String) -> String {
        var out = "", dash = false
        for c in name.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber) { out.append(c); dash = false } else if !dash && !out.isEmpty { out.append("-"); dash = true }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out.isEmpty ? "zone" : out
    }

    /// Every zone of `mapping` with `midi-fx` (the top level's, then each
    /// scene's own), with its destinations. More than `ZoneRouter.maxEffects` is a mistake.
    public static func all(in mapping: ControlMapping) throws(LV2Error) -> [MIDIEffectSpec] {
        var specs: [MIDIEffectSpec] = []
        func add(_ zone: Zone, scene: Int?, sceneName: String?) {
            guard !zone.midiFX.isEmpty else { return }
            appendNumbered(MIDIEffectSpec(scene: scene, sceneName: sceneName, zone: zone.name, uris: zone.midiFX,
                                          destinations: zone.destinations), to: &specs)
        }
        for zone in mapping.zones { add(zone, scene: nil, sceneName: nil) }
        for (s, scene) in mapping.scenes.enumerated() {
            for zone in scene.zones ?? [] { add(zone, scene: s, sceneName: scene.name) }
        }
        guard specs.count <= ZoneRouter.maxEffects else {
            throw LV2Error(kind: .midiEffect(zone: specs[ZoneRouter.maxEffects].zone, uri: specs[ZoneRouter.maxEffects].uris[0],
                                             problem: "more than \(ZoneRouter.maxEffects) zones with midi-fx in one mapping"), function: "MIDIEffectSpec")
        }
        return specs
    }

    /// The same from a file not read yet (`ControlMapping.midiEffects(path:)`): for the
    /// plugins' parameters and checks before the file's targets are resolved (no channels).
    /// A zone with a plugin the load's check finds unusable is left out: the load says
    /// so at its line, with the file's other mistakes (`PluginHost.checkMIDIEffectsAtLoad`).
    public static func all(in found: [MappingMIDIEffects]) -> [MIDIEffectSpec] {
        var specs: [MIDIEffectSpec] = []
        for f in found where !f.uris.contains(where: { ControlMapping.midiEffectProblem($0) != nil }) {
            appendNumbered(MIDIEffectSpec(scene: f.scene, sceneName: f.sceneName, zone: f.zone, uris: f.uris, destinations: []), to: &specs)
        }
        return specs
    }

    /// Two zones whose names make one key: the later one numbered (`fx.chords-2`).
    private static func appendNumbered(_ spec: MIDIEffectSpec, to specs: inout [MIDIEffectSpec]) {
        var spec = spec, n = 2
        let base = spec.key
        while specs.contains(where: { $0.key == spec.key }) { spec.key = "\(base)-\(n)"; n += 1 }
        specs.append(spec)
    }
}
