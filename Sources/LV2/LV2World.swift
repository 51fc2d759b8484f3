import CLilv
import Parameters

/// The installed LV2 plugins, as lilv finds them (`LV2_PATH`, else the
/// standard folders: ~/.lv2, /usr/local/lib/lv2, /usr/lib/lv2 …), read once.
///
/// Threads: lilv's world is not thread-safe; use one `LV2World` from one
/// thread at a time (it is the host's, never the render thread's).
public final class LV2World {
    let world: OpaquePointer
    /// Nodes for the classes and properties asked about, made once.
    let vocabulary: Vocabulary

    public init() throws(LV2Error) {
        guard let world = lilv_world_new() else { throw LV2Error(function: "lilv_world_new") }
        self.world = world
        lilv_world_load_all(world)
        vocabulary = Vocabulary(world: world)
    }

    deinit {
        vocabulary.free()
        lilv_world_free(world)
    }

    /// Loads one more bundle (a folder with a `manifest.ttl`), beside what LV2_PATH gave.
    public func loadBundle(at path: String) throws(LV2Error) {
        // A bundle's URI ends in a slash.
        guard let node = lilv_new_file_uri(world, nil, path.hasSuffix("/") ? path : path + "/") else {
            throw LV2Error(function: "lilv_new_file_uri", context: path)
        }
        defer { lilv_node_free(node) }
        lilv_world_load_bundle(world, node)
    }

    /// Every installed plugin, by URI.
    public var plugins: [LV2PluginInfo] {
        var result: [LV2PluginInfo] = []
        let all = lilv_world_get_all_plugins(world)
        var i = lilv_plugins_begin(all)
        while !lilv_plugins_is_end(all, i) {
            if let plugin = lilv_plugins_get(all, i) { result.append(LV2PluginInfo(plugin, in: self)) }
            i = lilv_plugins_next(all, i)
        }
        return result.sorted { $0.uri < $1.uri }
    }

    /// The plugin with this URI; else an error naming the closest ones.
    public func plugin(uri: String) throws(LV2Error) -> LV2PluginInfo {
        if let plugin = lilvPlugin(uri: uri) { return LV2PluginInfo(plugin, in: self) }
        let all = plugins
        var suggestions = EditDistance.closest(to: uri, among: all.map(\.uri)).map { [$0] } ?? []
        let tail = uri.split(whereSeparator: { "/#:".contains($0) }).last.map { $0.lowercased() } ?? ""
        // A short tail ("x") is in too many names to suggest any.
        if suggestions.isEmpty, tail.count >= 3 {
            suggestions = all.filter { $0.name.lowercased().contains(tail) || $0.uri.lowercased().hasSuffix(tail) }
                .prefix(3).map(\.uri)
        }
        throw LV2Error(kind: .unknownPlugin(uri: uri, suggestions: suggestions), function: "lilv_plugins_get_by_uri")
    }

    func lilvPlugin(uri: String) -> OpaquePointer? {
        guard let node = lilv_new_uri(world, uri) else { return nil }
        defer { lilv_node_free(node) }
        return lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node)
    }

    /// The URIs Carillon asks lilv about.
    struct Vocabulary {
        let inputPort, outputPort, audioPort, controlPort, atomPort, cvPort: OpaquePointer
        let midiEvent, integer, toggled, enumeration, unit, unitSymbol, instrumentPlugin, freeWheeling: OpaquePointer

        init(world: OpaquePointer) {
            func uri(_ text: String) -> OpaquePointer { lilv_new_uri(world, text)! }
            let core = "http://lv2plug.in/ns/lv2core#"
            inputPort = uri(core + "InputPort"); outputPort = uri(core + "OutputPort")
            audioPort = uri(core + "AudioPort"); controlPort = uri(core + "ControlPort")
            cvPort = uri(core + "CVPort"); atomPort = uri("http://lv2plug.in/ns/ext/atom#AtomPort")
            midiEvent = uri("http://lv2plug.in/ns/ext/midi#MidiEvent")
            integer = uri(core + "integer"); toggled = uri(core + "toggled"); enumeration = uri(core + "enumeration")
            unit = uri("http://lv2plug.in/ns/extensions/units#unit")
            unitSymbol = uri("http://lv2plug.in/ns/extensions/units#symbol")
            instrumentPlugin = uri(core + "InstrumentPlugin")
            freeWheeling = uri(core + "freeWheeling")
        }

        func free() {
            for node in [inputPort, outputPort, audioPort, controlPort, atomPort, cvPort, midiEvent, integer, toggled,
                         enumeration, unit, unitSymbol, instrumentPlugin, freeWheeling] { lilv_node_free(node) }
        }
    }
}

/// A lilv node's text (a URI, a string or a number), nil for none.
func text(_ node: OpaquePointer?) -> String? {
    guard let node, let c = lilv_node_as_string(node) else { return nil }
    return String(cString: c)
}

/// The text of a node the caller owns, freed.
func takeText(_ node: OpaquePointer?) -> String? {
    defer { if let node { lilv_node_free(node) } }
    return text(node)
}
