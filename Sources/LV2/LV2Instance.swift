import CLV2Log
import CLilv
#if canImport(Glibc)
import Glibc
#endif

/// One plugin, instantiated with the host features Carillon gives — URID map
/// and unmap, options (sample rate, block lengths, sequence size) with block
/// lengths bounded by `maxFrames`, in-place-broken honoured, the worker
/// (`LV2Worker`: a thread live, at once offline) — and every port
/// connected to a buffer of its own: audio in and out (planar, `maxFrames`
/// each), control values, a MIDI input sequence, CV ports (inputs at 0).
///
/// A plugin that requires any other feature is refused at `init` with its URI
/// and the feature's.
///
/// Threads: `init`, `activate`, `deactivate` and `deinit` off the render
/// thread; `clearMIDI`, `appendMIDI`, `setControl(at:)` and `run` on the
/// render thread only: they do not allocate, lock or log.
public final class LV2Instance {
    public let info: LV2PluginInfo
    public let maxFrames: Int
    public let sampleRate: Double
    /// Planar audio buffers, `maxFrames` each, in port order.
    public let audioInputs: [UnsafeMutablePointer<Float>]
    public let audioOutputs: [UnsafeMutablePointer<Float>]
    /// One value per control port (`info.controls`' order): set inputs before
    /// `run`, read outputs after.
    public let controls: UnsafeMutableBufferPointer<Float>

    /// The host features a plugin may require, by URI.
    public static let supportedFeatures: Set<String> = [
        "http://lv2plug.in/ns/ext/urid#map", "http://lv2plug.in/ns/ext/urid#unmap",
        "http://lv2plug.in/ns/ext/options#options", "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength",
        "http://lv2plug.in/ns/ext/worker#schedule", "http://lv2plug.in/ns/ext/log#log",
        // Inputs and outputs never share a buffer here.
        "http://lv2plug.in/ns/lv2core#inPlaceBroken",
    ]

    /// The plugin may not read and write one buffer (`lv2:inPlaceBroken`).
    public let inPlaceBroken: Bool
    /// The audio ports' indices, in `audioInputs`' and `audioOutputs`' order.
    private let audioInputPorts: [UInt32], audioOutputPorts: [UInt32]
    private let instance: UnsafeMutablePointer<LilvInstance>
    /// Kept alive as long as the instance: lilv frees an instance's library through its world.
    private let world: LV2World
    private let uridMap: URIDMap
    private let features: Features
    private let worker: LV2Worker
    /// The MIDI input sequence (nil: the plugin takes no MIDI), its MIDI output
    /// sequence (nil: it sends none), and every atom port's buffer.
    private let midiInput: UnsafeMutableRawPointer?
    private let midiOutput: UnsafeMutableRawPointer?
    private let atomBuffers: [(buffer: UnsafeMutableRawPointer, isOutput: Bool)]
    private let cvBuffers: [UnsafeMutablePointer<Float>]
    private let sequenceType: UInt32, chunkType: UInt32, midiEventType: UInt32
    private var active = false

    /// Refuses a plugin that requires a host feature Carillon does not give,
    /// naming it; from its data alone, before anything is instantiated.
    public static func checkFeatures(_ info: LV2PluginInfo) throws(LV2Error) {
        if let missing = info.requiredFeatures.first(where: { !supportedFeatures.contains($0) }) {
            throw LV2Error(kind: .unsupportedFeature(plugin: info.uri, feature: missing), function: "lilv_plugin_get_required_features")
        }
    }

    /// Bytes of each atom port's buffer: about 1,000 MIDI events a block.
    public static let sequenceCapacity = 16_384

    /// `offline`: a render, where the worker's jobs are done at once (the same bytes every run).
    public init(world: LV2World, uri: String, sampleRate: Double, maxFrames: Int, urids: URIDMap,
                offline: Bool = false) throws(LV2Error) {
        precondition(sampleRate > 0 && maxFrames > 0)
        info = try world.plugin(uri: uri)
        try Self.checkFeatures(info)
        guard let plugin = world.lilvPlugin(uri: uri) else {
            throw LV2Error(kind: .unknownPlugin(uri: uri, suggestions: []), function: "lilv_plugins_get_by_uri")
        }
        self.world = world
        inPlaceBroken = info.requiredFeatures.contains("http://lv2plug.in/ns/lv2core#inPlaceBroken")
        self.maxFrames = maxFrames
        self.sampleRate = sampleRate
        self.uridMap = urids
        sequenceType = urids.map("http://lv2plug.in/ns/ext/atom#Sequence")
        chunkType = urids.map("http://lv2plug.in/ns/ext/atom#Chunk")
        midiEventType = urids.map("http://lv2plug.in/ns/ext/midi#MidiEvent")
        let worker = LV2Worker(mode: offline ? .synchronous : .thread)
        self.worker = worker
        features = Features(urids: urids, sampleRate: Float(sampleRate), maxFrames: Int32(maxFrames),
                            sequenceSize: Int32(Self.sequenceCapacity), worker: worker.schedule, name: info.name)
        guard let instance = lilv_plugin_instantiate(plugin, sampleRate, features.list) else {
            throw LV2Error(function: "lilv_plugin_instantiate", context: "\(uri) did not instantiate at \(Int(sampleRate)) Hz")
        }
        self.instance = instance
        do {
            let interface = lilv_instance_get_extension_data(instance, "http://lv2plug.in/ns/ext/worker#interface")
            try worker.bind(handle: lilv_instance_get_handle(instance),
                            interface: interface?.assumingMemoryBound(to: LV2_Worker_Interface.self))
        } catch {
            lilv_instance_free(instance)
            throw LV2Error(function: "pthread_create", context: "\(uri)'s worker: \(error)")
        }

        // Ports: every one connected, to buffers that live as long as the instance.
        let v = world.vocabulary
        var audioIn: [UnsafeMutablePointer<Float>] = [], audioOut: [UnsafeMutablePointer<Float>] = []
        var atoms: [(UnsafeMutableRawPointer, Bool)] = [], cvs: [UnsafeMutablePointer<Float>] = []
        var inputPorts: [UInt32] = [], outputPorts: [UInt32] = []
        var midi: UnsafeMutableRawPointer?, midiOut: UnsafeMutableRawPointer?
        controls = .allocate(capacity: info.controls.count)
        for (k, control) in info.controls.enumerated() {
            controls[k] = control.defaultValue ?? control.minimum ?? 0
            lilv_instance_connect_port(instance, UInt32(control.index), controls.baseAddress! + k)
        }
        for index in 0..<Int(lilv_plugin_get_num_ports(plugin)) {
            guard let port = lilv_plugin_get_port_by_index(plugin, UInt32(index)) else { continue }
            let isInput = lilv_port_is_a(plugin, port, v.inputPort)
            if lilv_port_is_a(plugin, port, v.audioPort) || lilv_port_is_a(plugin, port, v.cvPort) {
                let buffer = UnsafeMutablePointer<Float>.allocate(capacity: maxFrames)
                buffer.initialize(repeating: 0, count: maxFrames)
                if lilv_port_is_a(plugin, port, v.cvPort) { cvs.append(buffer) }
                else if isInput { audioIn.append(buffer); inputPorts.append(UInt32(index)) }
                else { audioOut.append(buffer); outputPorts.append(UInt32(index)) }
                lilv_instance_connect_port(instance, UInt32(index), buffer)
            } else if lilv_port_is_a(plugin, port, v.atomPort) {
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.sequenceCapacity, alignment: 8)
                buffer.initializeMemory(as: UInt8.self, repeating: 0, count: Self.sequenceCapacity)
                atoms.append((buffer, !isInput))
                if isInput, midi == nil, lilv_port_supports_event(plugin, port, v.midiEvent) { midi = buffer }
                if !isInput, midiOut == nil, lilv_port_supports_event(plugin, port, v.midiEvent) { midiOut = buffer }
                lilv_instance_connect_port(instance, UInt32(index), buffer)
            }
        }
        audioInputs = audioIn; audioOutputs = audioOut
        audioInputPorts = inputPorts; audioOutputPorts = outputPorts
        atomBuffers = atoms; cvBuffers = cvs; midiInput = midi; midiOutput = midiOut
        for (buffer, isOutput) in atoms { prepareAtom(buffer, isOutput: isOutput) }
    }

    deinit {
        worker.stop()   // its thread may be in the plugin's work()
        deactivate()
        lilv_instance_free(instance)
        for b in audioInputs + audioOutputs + cvBuffers { b.deallocate() }
        for a in atomBuffers { a.buffer.deallocate() }
        controls.deallocate()
    }

    /// Before the first `run` (and after `deactivate`, to run again).
    public func activate() {
        guard !active else { return }
        lilv_instance_activate(instance)
        active = true
    }

    public func deactivate() {
        guard active else { return }
        lilv_instance_deactivate(instance)
        active = false
    }

    /// A plugin that reports latency writes it in `run`: one short block of
    /// silence (its own buffers) has it report before the first real block, so
    /// a host can align the strips from the start. Off the render thread, after
    /// `activate`; nothing is run for a plugin without a latency port.
    public func primeLatency() {
        guard info.latencyControl != nil else { return }
        for buffer in audioInputs { buffer.update(repeating: 0, count: maxFrames) }
        run(frames: min(maxFrames, 64))
    }

    /// The latency the plugin reported at its last `run`, in frames (0: none reported).
    public var latency: Int {
        guard let k = info.latencyControl, controls[k].isFinite, controls[k] > 0 else { return 0 }
        return Int(controls[k].rounded())
    }

    // For `LV2State`: the instance, its plugin and world, the features it was made with.
    var instanceHandle: UnsafeMutablePointer<LilvInstance> { instance }
    var lilvPlugin: OpaquePointer? { world.lilvPlugin(uri: info.uri) }
    var worldPointer: OpaquePointer { world.world }
    var featureList: UnsafePointer<UnsafePointer<LV2_Feature>?> { UnsafePointer(features.list) }
    var urids: URIDMap { uridMap }

    /// The plugin does work off the render thread (the worker extension).
    public var usesWorker: Bool { worker.isUsed }

    /// The plugin takes MIDI (it has a MIDI input port).
    public var takesMIDI: Bool { midiInput != nil }

    /// Empties the MIDI input for the next `run`.
    public func clearMIDI() {
        if let midiInput { prepareAtom(midiInput, isOutput: false) }
    }

    /// Adds a MIDI message (1…3 bytes) at `frame` of the next `run`, in time
    /// order. False when there is no MIDI input or its buffer is full.
    @discardableResult
    public func appendMIDI(frame: Int, status: UInt8, _ data1: UInt8, _ data2: UInt8, count: Int) -> Bool {
        guard let midiInput, (1...3).contains(count) else { return false }
        let header = midiInput.assumingMemoryBound(to: UInt32.self)
        let size = Int(header[0])  // the sequence body's bytes: 8 (unit, pad) + the events'
        let offset = 8 + size       // after the atom header (size, type)
        let eventBytes = 16 + 8    // time, body header, the message padded to 8
        guard offset + eventBytes <= Self.sequenceCapacity else { return false }
        let event = midiInput + offset
        event.storeBytes(of: Int64(frame), as: Int64.self)
        event.storeBytes(of: UInt32(count), toByteOffset: 8, as: UInt32.self)
        event.storeBytes(of: midiEventType, toByteOffset: 12, as: UInt32.self)
        let bytes = (event + 16).assumingMemoryBound(to: UInt8.self)
        bytes[0] = status; bytes[1] = data1; bytes[2] = data2
        for i in 3..<8 { bytes[i] = 0 }
        header[0] = UInt32(size + eventBytes)
        return true
    }

    /// The plugin sends MIDI (it has a MIDI output port).
    public var sendsMIDI: Bool { midiOutput != nil }

    /// One MIDI event of the output sequence the last `run` wrote.
    public struct MIDIOutputEvent: Sendable {
        /// Frame offset in the block `run` rendered.
        public var frame: Int
        public var status: UInt8, data1: UInt8, data2: UInt8
        /// Bytes of the message (1…3).
        public var count: Int
        /// Where the next event is (`nextMIDIOutput(after:)`).
        public var next: Int
    }

    /// The output sequence's first MIDI event from `position` on (0: the
    /// first), after a `run` and before the next: events other than MIDI
    /// and MIDI messages longer than 3 bytes (SysEx) are passed over. Nil at
    /// the end, or without a MIDI output. Render thread: no allocation.
    public func nextMIDIOutput(after position: Int) -> MIDIOutputEvent? {
        guard let midiOutput else { return nil }
        let header = midiOutput.assumingMemoryBound(to: UInt32.self)
        // A chunk (the plugin wrote nothing: its type was left Chunk) holds no events.
        guard header[1] != chunkType else { return nil }
        let end = 8 + min(Int(header[0]), Self.sequenceCapacity - 8)
        var offset = max(16, 16 + position)   // after the atom header and the sequence body's (unit, pad)
        while offset + 16 <= end {
            let event = midiOutput + offset
            let frame = Int(event.load(as: Int64.self))
            let size = Int(event.load(fromByteOffset: 8, as: UInt32.self))
            let type = event.load(fromByteOffset: 12, as: UInt32.self)
            let next = offset + 16 + ((size + 7) & ~7)
            guard next <= end + 7 else { return nil }
            if type == midiEventType, (1...3).contains(size) {
                let bytes = (event + 16).assumingMemoryBound(to: UInt8.self)
                return MIDIOutputEvent(frame: frame, status: bytes[0], data1: size > 1 ? bytes[1] : 0, data2: size > 2 ? bytes[2] : 0,
                                       count: size, next: next - 16)
            }
            offset = next
        }
        return nil
    }

    /// Sets control `k` (`info.controls`' order) for the next `run`.
    @inline(__always)
    public func setControl(at k: Int, to value: Float) { controls[k] = value }

    /// Runs `frames` (≤ `maxFrames`) frames: audio inputs read, outputs
    /// written, the MIDI sequence consumed (cleared afterwards).
    public func run(frames: Int) {
        precondition(frames <= maxFrames && active)
        for k in 0..<atomBuffers.count where atomBuffers[k].isOutput { prepareAtom(atomBuffers[k].buffer, isOutput: true) }
        lilv_instance_run(instance, UInt32(frames))
        worker.deliver()
        clearMIDI()
    }

    /// Runs `frames` frames reading audio input `k` from `inputs[k]` and
    /// writing output `k` into `outputs[k]` (the caller's buffers, `frames`
    /// long; an input and an output may be one buffer unless `inPlaceBroken`),
    /// then connects the ports back to the instance's own buffers.
    public func run(frames: Int, inputs: UnsafePointer<UnsafeMutablePointer<Float>>, outputs: UnsafePointer<UnsafeMutablePointer<Float>>) {
        // Index loops: iterators over these arrays made heap calls (measured, debug build).
        for k in 0..<audioInputPorts.count { lilv_instance_connect_port(instance, audioInputPorts[k], inputs[k]) }
        for k in 0..<audioOutputPorts.count { lilv_instance_connect_port(instance, audioOutputPorts[k], outputs[k]) }
        run(frames: frames)
        for k in 0..<audioInputPorts.count { lilv_instance_connect_port(instance, audioInputPorts[k], audioInputs[k]) }
        for k in 0..<audioOutputPorts.count { lilv_instance_connect_port(instance, audioOutputPorts[k], audioOutputs[k]) }
    }

    /// An input: an empty sequence. An output: a chunk of the buffer's capacity (the plugin writes a sequence).
    private func prepareAtom(_ buffer: UnsafeMutableRawPointer, isOutput: Bool) {
        let header = buffer.assumingMemoryBound(to: UInt32.self)
        if isOutput {
            header[0] = UInt32(Self.sequenceCapacity - 8); header[1] = chunkType
        } else {
            header[0] = 8; header[1] = sequenceType
            header[2] = 0; header[3] = 0  // unit (frames), pad
        }
    }

    /// The feature structures handed to the plugin, kept alive with the instance.
    private final class Features {
        let list: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
        /// What `deinit` releases.
        private var releases: [() -> Void] = []
        private let uridMap: URIDMap

        init(urids: URIDMap, sampleRate: Float, maxFrames: Int32, sequenceSize: Int32,
             worker: UnsafeMutablePointer<LV2_Worker_Schedule>, name: String) {
            self.uridMap = urids
            let (map, unmap) = urids.makeFeatures()
            releases += [map.deallocate, unmap.deallocate]
            // log:log: the plugin's messages as lines on standard error, named after it (CLV2Log).
            let log = carillon_lv2_log_new(name, urids.map("http://lv2plug.in/ns/ext/log#Trace"), urids.map("http://lv2plug.in/ns/ext/log#Error"),
                                           urids.map("http://lv2plug.in/ns/ext/log#Warning"))
            releases.append { carillon_lv2_log_free(log) }
            // Option values: sample rate (atom:Float), block lengths and sequence size (atom:Int).
            let rate = UnsafeMutablePointer<Float>.allocate(capacity: 1); rate.initialize(to: sampleRate)
            let ints = UnsafeMutablePointer<Int32>.allocate(capacity: 4)
            ints.initialize(from: [1, maxFrames, maxFrames, sequenceSize], count: 4)
            releases += [rate.deallocate, ints.deallocate]
            let float = urids.map("http://lv2plug.in/ns/ext/atom#Float"), int = urids.map("http://lv2plug.in/ns/ext/atom#Int")
            func option(_ key: String, _ type: UInt32, _ value: UnsafeRawPointer) -> LV2_Options_Option {
                LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: urids.map(key), size: 4, type: type, value: value)
            }
            let options = UnsafeMutablePointer<LV2_Options_Option>.allocate(capacity: 6)
            options.initialize(from: [
                option("http://lv2plug.in/ns/lv2core#sampleRate", float, rate),
                option("http://lv2plug.in/ns/ext/buf-size#minBlockLength", int, ints),
                option("http://lv2plug.in/ns/ext/buf-size#maxBlockLength", int, ints + 1),
                option("http://lv2plug.in/ns/ext/buf-size#nominalBlockLength", int, ints + 2),
                option("http://lv2plug.in/ns/ext/buf-size#sequenceSize", int, ints + 3),
                LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil),
            ], count: 6)
            releases.append(options.deallocate)
            let entries: [(String, UnsafeMutableRawPointer?)] = [
                ("http://lv2plug.in/ns/ext/urid#map", UnsafeMutableRawPointer(map)),
                ("http://lv2plug.in/ns/ext/urid#unmap", UnsafeMutableRawPointer(unmap)),
                ("http://lv2plug.in/ns/ext/options#options", UnsafeMutableRawPointer(options)),
                ("http://lv2plug.in/ns/ext/buf-size#boundedBlockLength", nil),
                ("http://lv2plug.in/ns/ext/worker#schedule", UnsafeMutableRawPointer(worker)),
                ("http://lv2plug.in/ns/ext/log#log", UnsafeMutableRawPointer(log)),
            ]
            list = .allocate(capacity: entries.count + 1)
            for (i, (uri, data)) in entries.enumerated() {
                let feature = UnsafeMutablePointer<LV2_Feature>.allocate(capacity: 1)
                let name = strdup(uri)!
                feature.initialize(to: LV2_Feature(URI: name, data: data))
                releases += [feature.deallocate, { free(name) }]
                list[i] = UnsafePointer(feature)
            }
            list[entries.count] = nil
        }

        deinit {
            for release in releases { release() }
            list.deallocate()
        }
    }
}
