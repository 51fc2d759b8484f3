/// A failed lilv call or an LV2 plugin Carillon cannot use, with what to do.
public struct LV2Error: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// No installed plugin has this URI; `suggestions` are close ones.
        case unknownPlugin(uri: String, suggestions: [String])
        /// The plugin requires a host feature Carillon does not give.
        case unsupportedFeature(plugin: String, feature: String)
        /// The plugin cannot serve where it was asked to (an insert that is not a stereo or mono effect).
        case unsuitable(plugin: String, reason: String)
        /// A zone's `midi-fx` plugin that is missing or not a MIDI effect (`problem` says which).
        case midiEffect(zone: String, uri: String, problem: String)
        /// Any other failing call.
        case call
    }

    public var kind: Kind
    /// The C function that failed, e.g. `lilv_world_new`.
    public var function: String
    public var context: String?

    public init(kind: Kind = .call, function: String, context: String? = nil) {
        self.kind = kind; self.function = function; self.context = context
    }

    public var description: String {
        switch kind {
        case .unknownPlugin(let uri, let suggestions):
            "no LV2 plugin \(uri) is installed"
                + (suggestions.isEmpty ? "" : " (did you mean \(suggestions.joined(separator: ", "))?)")
                + " — `carillon plugins` lists the installed ones; LV2_PATH says where to look"
        case .unsupportedFeature(let plugin, let feature):
            "\(plugin) requires the LV2 feature \(feature), which Carillon does not provide"
        case .unsuitable(let plugin, let reason):
            "\(plugin): \(reason)"
        case .midiEffect(let zone, let uri, let problem):
            "zone '\(zone)', midi-fx \(uri): \(problem)"
        case .call:
            "\(function) failed" + (context.map { ": \($0)" } ?? "")
        }
    }
}
