import Controls
import Engine
import LV2
import MIDI
import Rig

/// A zone's `midi-fx`: LV2 MIDI plugins in order (atom-sequence MIDI in →
/// atom-sequence MIDI out), run block by block on the sample clock. The zone's
/// messages (matched and changed by the zone: transposed, reshaped, on its
/// first destination's channel) come in at their offsets; each plugin's
/// output is the next one's input at the same frames; the last one's is sent
/// to every destination of the zone, each on its own channel.
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
    /// Per channel and key: the notes the last plugin has on (its note-ons less its note-offs).
    private let sounding: UnsafeMutablePointer<UInt8>
    /// An All Notes Off came in this block (at this offset; -1: none): release what the chain holds there.
    private var releaseAt = -1

    init(host: PluginHost, spec: MIDIEffectSpec, sampleRate: Int, maxFrames: Int, offline: Bool,
         controls bindings: [[PluginControls.Binding]], parameters: ParameterStore) throws(LV2Error) {
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
        destinationCount = max(1, spec.channels.count)
        destinations = .allocate(capacity: destinationCount)
        for k in 0..<destinationCount { destinations[k] = UInt8(k < spec.channels.count ? spec.channels[k].value : 0) }
        sounding = .allocate(capacity: 16 * 128)
        sounding.initialize(repeating: 0, count: 16 * 128)
    }

    deinit {
        destinations.deallocate()
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

    /// The message on each destination's channel, from `at` in `output`; returns where the next goes.
    @inline(__always)
    private func send(status: UInt8, _ data1: UInt8, _ data2: UInt8, frame: Int,
                      into output: UnsafeMutableBufferPointer<TimedMessage>, at start: Int) -> Int {
        var i = start
        for d in 0..<destinationCount where i < output.count {
            let message = ChannelMessage(status: (status & 0xF0) | destinations[d], data1: data1, data2: data2)
            output[i] = TimedMessage(frame: UInt64(frame), message: message)
            i += 1
        }
        return i
    }
}

/// A zone's `midi-fx` as the host makes it: the zone (the top level's, or a
/// scene's own), its plugins in order and the channels its output goes to.
public struct MIDIEffectSpec: Hashable, Sendable {
    /// The scene whose own `zones:` list the zone (its place and name); nil: the top level's.
    public var scene: Int?
    public var sceneName: String?
    public var zone: String
    public var uris: [String]
    /// The zone's destinations (Carillon's channels); its messages go into the chain on the first one's.
    public var channels: [Channel]
    /// `fx.ZONE` or `fx.SCENE.ZONE` (names as keys: lower case, a dash for any run of other characters).
    public var key: String

    public init(scene: Int? = nil, sceneName: String? = nil, zone: String, uris: [String], channels: [Channel]) {
        self.scene = scene; self.sceneName = sceneName; self.zone = zone; self.uris = uris; self.channels = channels
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
    /// scene's own), with its destinations. A zone that sends to an external
    /// port is refused (the chain runs on the render thread, which sends to
    /// Carillon's channels only).
    public static func all(in mapping: ControlMapping) throws(LV2Error) -> [MIDIEffectSpec] {
        var specs: [MIDIEffectSpec] = []
        func add(_ zone: Zone, scene: Int?, sceneName: String?) throws(LV2Error) {
            guard !zone.midiFX.isEmpty else { return }
            var channels: [Channel] = []
            for destination in zone.destinations {
                switch destination {
                case .channel(let c): channels.append(c)
                case .port(let name, _):
                    throw LV2Error(kind: .midiEffect(zone: zone.name, uri: zone.midiFX[0], problem:
                        "a zone with midi-fx sends to Carillon's channels only, not yet to an external port ('\(name)');"
                        + " give the port a zone of its own without midi-fx"), function: "MIDIEffectSpec")
                }
            }
            appendNumbered(MIDIEffectSpec(scene: scene, sceneName: sceneName, zone: zone.name, uris: zone.midiFX, channels: channels),
                           to: &specs)
        }
        for zone in mapping.zones { try add(zone, scene: nil, sceneName: nil) }
        for (s, scene) in mapping.scenes.enumerated() {
            for zone in scene.zones ?? [] { try add(zone, scene: s, sceneName: scene.name) }
        }
        guard specs.count <= ZoneRouter.maxEffects else {
            throw LV2Error(kind: .midiEffect(zone: specs[ZoneRouter.maxEffects].zone, uri: specs[ZoneRouter.maxEffects].uris[0],
                                             problem: "more than \(ZoneRouter.maxEffects) zones with midi-fx in one mapping"), function: "MIDIEffectSpec")
        }
        return specs
    }

    /// The same from a file not read yet (`ControlMapping.midiEffects(path:)`): for the
    /// plugins' parameters and checks before the file's targets are resolved (no channels).
    public static func all(in found: [MappingMIDIEffects]) -> [MIDIEffectSpec] {
        var specs: [MIDIEffectSpec] = []
        for f in found {
            appendNumbered(MIDIEffectSpec(scene: f.scene, sceneName: f.sceneName, zone: f.zone, uris: f.uris, channels: []), to: &specs)
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
