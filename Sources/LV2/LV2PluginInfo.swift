import CLilv

/// What an installed LV2 plugin is and offers, read from its data (no code
/// of the plugin runs): its class, its audio, MIDI and control ports, and the
/// host features it requires.
public struct LV2PluginInfo: Sendable, Encodable {
    public enum Kind: String, Sendable, Encodable {
        /// Plays MIDI: class `lv2:InstrumentPlugin`, or MIDI in and audio out with no audio in.
        case instrument
        /// Audio in and audio out.
        case effect
        /// Anything else (an analyser, a generator with no MIDI input, a MIDI filter).
        case other
    }

    /// A control port: a value the host sets (input) or reads (output).
    public struct Control: Sendable, Encodable, Equatable {
        public var index: Int
        public var symbol: String
        public var name: String
        public var isInput: Bool
        /// The plugin's range and default; nil where its data gives none.
        public var minimum: Float?
        public var maximum: Float?
        public var defaultValue: Float?
        /// The unit's symbol (`Hz`, `dB`, `ms`), nil for none.
        public var unit: String?
        public var integer: Bool
        public var toggle: Bool
        public var enumeration: Bool
        /// Named values (`lv2:scalePoint`), by value.
        public var scalePoints: [ScalePoint]

        enum CodingKeys: String, CodingKey {
            case index, symbol, name, isInput = "input", minimum, maximum, defaultValue = "default", unit, integer,
                 toggle, enumeration, scalePoints = "scale-points"
        }
    }

    public struct ScalePoint: Sendable, Encodable, Equatable {
        public var label: String
        public var value: Float
    }

    public var uri: String
    public var name: String
    public var kind: Kind
    /// The plugin class's label (`Instrument`, `Delay`, `Reverb` …).
    public var classLabel: String
    public var audioInputs: Int
    public var audioOutputs: Int
    /// Atom input ports that take MIDI events.
    public var midiInputs: Int
    /// Atom output ports that send MIDI events (a MIDI effect has one, and a MIDI input).
    public var midiOutputs: Int
    public var controls: [Control]
    /// Ports Carillon cannot feed yet (CV, atom ports without MIDI, event ports), by symbol.
    public var otherPorts: [String]
    /// `lv2:requiredFeature` URIs.
    public var requiredFeatures: [String]
    /// The plugin reports its latency on a control output port.
    public var reportsLatency: Bool
    /// The control input (its place in `controls`) designated `lv2:freeWheeling`:
    /// 1 while rendering faster than real time (offline).
    public var freeWheelingControl: Int?
    /// The control output (its place in `controls`) where the plugin reports its latency in frames.
    public var latencyControl: Int?

    enum CodingKeys: String, CodingKey {
        case uri, name, kind, classLabel = "class", audioInputs = "audio-inputs", audioOutputs = "audio-outputs",
             midiInputs = "midi-inputs", midiOutputs = "midi-outputs", controls, otherPorts = "other-ports", requiredFeatures = "required-features",
             reportsLatency = "reports-latency", freeWheelingControl = "free-wheeling-control",
             latencyControl = "latency-control"
    }

    init(_ plugin: OpaquePointer, in world: LV2World) {
        let v = world.vocabulary
        uri = text(lilv_plugin_get_uri(plugin)) ?? ""
        name = takeText(lilv_plugin_get_name(plugin)) ?? uri
        let pluginClass = lilv_plugin_get_class(plugin)
        classLabel = text(lilv_plugin_class_get_label(pluginClass)) ?? "Plugin"
        let classURI = text(lilv_plugin_class_get_uri(pluginClass))
        reportsLatency = lilv_plugin_has_latency(plugin)

        let count = Int(lilv_plugin_get_num_ports(plugin))
        var minimums = [Float](repeating: .nan, count: count)
        var maximums = minimums, defaults = minimums
        lilv_plugin_get_port_ranges_float(plugin, &minimums, &maximums, &defaults)
        var audioIn = 0, audioOut = 0, midiIn = 0, midiOut = 0
        var controls: [Control] = [], others: [String] = []
        for index in 0..<count {
            guard let port = lilv_plugin_get_port_by_index(plugin, UInt32(index)) else { continue }
            let symbol = text(lilv_port_get_symbol(plugin, port)) ?? "port\(index)"
            let isInput = lilv_port_is_a(plugin, port, v.inputPort)
            if lilv_port_is_a(plugin, port, v.audioPort) {
                if isInput { audioIn += 1 } else { audioOut += 1 }
            } else if lilv_port_is_a(plugin, port, v.controlPort) {
                controls.append(Self.control(plugin, port, index: index, symbol: symbol, isInput: isInput,
                                             range: (minimums[index], maximums[index], defaults[index]), world: world))
            } else if isInput, lilv_port_is_a(plugin, port, v.atomPort), lilv_port_supports_event(plugin, port, v.midiEvent) {
                midiIn += 1
            } else if !isInput, lilv_port_is_a(plugin, port, v.atomPort), lilv_port_supports_event(plugin, port, v.midiEvent) {
                midiOut += 1
            } else if isInput || !lilv_port_is_a(plugin, port, v.atomPort) {
                // An output atom port (events the plugin sends) may stay unread; anything else needs feeding.
                others.append(symbol)
            }
        }
        audioInputs = audioIn; audioOutputs = audioOut; midiInputs = midiIn; midiOutputs = midiOut
        self.controls = controls
        otherPorts = others

        var features: [String] = []
        if let required = lilv_plugin_get_required_features(plugin) {
            var i = lilv_nodes_begin(required)
            while !lilv_nodes_is_end(required, i) {
                if let uri = text(lilv_nodes_get(required, i)) { features.append(uri) }
                i = lilv_nodes_next(required, i)
            }
            lilv_nodes_free(required)
        }
        requiredFeatures = features.sorted()
        if let port = lilv_plugin_get_port_by_designation(plugin, v.inputPort, v.freeWheeling) {
            let index = Int(lilv_port_get_index(plugin, port))
            freeWheelingControl = controls.firstIndex { $0.index == index }
        }
        if reportsLatency {
            let index = Int(lilv_plugin_get_latency_port_index(plugin))
            latencyControl = controls.firstIndex { $0.index == index && !$0.isInput }
        }

        if classURI == "http://lv2plug.in/ns/lv2core#InstrumentPlugin" || (midiIn > 0 && audioOut > 0 && audioIn == 0) {
            kind = .instrument
        } else if audioIn > 0 && audioOut > 0 {
            kind = .effect
        } else {
            kind = .other
        }
    }

    private static func control(_ plugin: OpaquePointer, _ port: OpaquePointer, index: Int, symbol: String, isInput: Bool,
                                range: (Float, Float, Float), world: LV2World) -> Control {
        let v = world.vocabulary
        var unit: String?
        if let unitNode = lilv_port_get(plugin, port, v.unit) {
            // A units: URI (units:hz) or a blank node with its own symbol: ask the data for `units:symbol`.
            unit = takeText(lilv_world_get(world.world, unitNode, v.unitSymbol, nil))
            lilv_node_free(unitNode)
        }
        var points: [ScalePoint] = []
        if let scalePoints = lilv_port_get_scale_points(plugin, port) {
            var i = lilv_scale_points_begin(scalePoints)
            while !lilv_scale_points_is_end(scalePoints, i) {
                if let point = lilv_scale_points_get(scalePoints, i), let label = text(lilv_scale_point_get_label(point)),
                    let value = lilv_scale_point_get_value(point)
                {
                    points.append(ScalePoint(label: label, value: lilv_node_as_float(value)))
                }
                i = lilv_scale_points_next(scalePoints, i)
            }
            lilv_scale_points_free(scalePoints)
        }
        func given(_ x: Float) -> Float? { x.isNaN ? nil : x }
        return Control(index: index, symbol: symbol, name: takeText(lilv_port_get_name(plugin, port)) ?? symbol,
                       isInput: isInput, minimum: given(range.0), maximum: given(range.1), defaultValue: given(range.2),
                       unit: unit, integer: lilv_port_has_property(plugin, port, v.integer),
                       toggle: lilv_port_has_property(plugin, port, v.toggled),
                       enumeration: lilv_port_has_property(plugin, port, v.enumeration),
                       scalePoints: points.sorted { $0.value < $1.value })
    }
}
