import CLilv
#if canImport(Glibc)
import Glibc
#endif

/// A plugin's state as lilv keeps it: its control inputs' values and what its
/// state interface stores (`state:interface`), read from or written to a
/// Turtle file (`lilv_state_save` writes the file and a `manifest.ttl`
/// beside it).
public final class LV2State {
    let state: OpaquePointer
    /// The map the state was read with; kept while the state lives.
    private let map: UnsafeMutablePointer<LV2_URID_Map>, unmap: UnsafeMutablePointer<LV2_URID_Unmap>
    private let urids: URIDMap
    /// The world the state's nodes belong to: freed after the state.
    private let world: LV2World

    /// Reads `path` (a state file `save` wrote, or any lilv state file).
    public init(path: String, world: LV2World, urids: URIDMap) throws(LV2Error) {
        (map, unmap) = urids.makeFeatures()
        self.urids = urids
        self.world = world
        guard let state = lilv_state_new_from_file(world.world, map, nil, path) else {
            map.deallocate(); unmap.deallocate()
            throw LV2Error(function: "lilv_state_new_from_file", context: "\(path) is not a plugin state lilv can read")
        }
        self.state = state
    }

    deinit {
        lilv_state_free(state)
        map.deallocate(); unmap.deallocate()
    }

    /// The URI of the plugin whose state it is.
    public var pluginURI: String {
        guard let node = lilv_state_get_plugin_uri(state), let uri = lilv_node_as_uri(node) else { return "" }
        return String(cString: uri)
    }

    /// The control inputs' values it holds, by port symbol (numbers only).
    public var portValues: [String: Float] {
        final class Box { var values: [String: Float] = [:]; let urids: URIDMap; init(_ u: URIDMap) { urids = u } }
        let box = Box(urids)
        lilv_state_emit_port_values(state, { symbol, user, value, size, type in
            guard let symbol, let user, let value else { return }
            let box = Unmanaged<Box>.fromOpaque(user).takeUnretainedValue()
            let name = String(cString: symbol)
            switch box.urids.unmap(type) {
            case "http://lv2plug.in/ns/ext/atom#Float" where size == 4: box.values[name] = value.load(as: Float.self)
            case "http://lv2plug.in/ns/ext/atom#Double" where size == 8: box.values[name] = Float(value.load(as: Double.self))
            case "http://lv2plug.in/ns/ext/atom#Int" where size == 4: box.values[name] = Float(value.load(as: Int32.self))
            case "http://lv2plug.in/ns/ext/atom#Bool" where size == 4: box.values[name] = value.load(as: Int32.self) != 0 ? 1 : 0
            default: break
            }
        }, Unmanaged.passUnretained(box).toOpaque())
        return box.values
    }
}

extension LV2Instance {
    /// Hands the plugin what its state interface saved (not the port values:
    /// the host sets those as parameters). Off the render thread, before `activate`.
    public func restore(_ saved: LV2State) {
        lilv_state_restore(saved.state, instanceHandle, nil, nil, 0, featureList)
    }

    /// Writes the plugin's state — its control inputs as they are now and what
    /// its state interface gives — to `directory/file` (the folder made if
    /// missing). Off the render thread: never while `run` may be called.
    public func saveState(directory: String, file: String) throws(LV2Error) {
        mkdir(directory, 0o755)
        guard let plugin = lilvPlugin else {
            throw LV2Error(kind: .unknownPlugin(uri: info.uri, suggestions: []), function: "lilv_plugins_get_by_uri")
        }
        let (map, unmap) = urids.makeFeatures()
        defer { map.deallocate(); unmap.deallocate() }
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard let state = lilv_state_new_from_instance(plugin, instanceHandle, map, nil, nil, nil, directory, { symbol, user, size, type in
            guard let symbol, let user else { return nil }
            return Unmanaged<LV2Instance>.fromOpaque(user).takeUnretainedValue().portValue(symbol: String(cString: symbol), size: size, type: type)
        }, user, UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue), featureList) else {
            throw LV2Error(function: "lilv_state_new_from_instance", context: "\(info.uri)'s state could not be taken")
        }
        defer { lilv_state_free(state) }
        guard lilv_state_save(worldPointer, map, unmap, state, nil, directory, file) == 0 else {
            throw LV2Error(function: "lilv_state_save", context: "cannot write \(directory)/\(file)")
        }
    }

    /// `saveState`'s port value callback: a control input's current value, as an atom:Float.
    private func portValue(symbol: String, size: UnsafeMutablePointer<UInt32>?, type: UnsafeMutablePointer<UInt32>?) -> UnsafeRawPointer? {
        guard let k = info.controls.firstIndex(where: { $0.symbol == symbol && $0.isInput }) else { return nil }
        size?.pointee = 4
        type?.pointee = urids.map("http://lv2plug.in/ns/ext/atom#Float")
        return UnsafeRawPointer(controls.baseAddress! + k)
    }
}
