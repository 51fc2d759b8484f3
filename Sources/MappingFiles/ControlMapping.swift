import ControlDefinitions
import MIDI
import Parameters
import Rig

/// A loaded mapping file: which controller it is for, how channels are set
/// up, and its controls. Only ever built from a file without errors.
public struct ControlMapping: Hashable, Sendable {
    /// The file it came from (as given to the loader).
    public var file: String
    public var name: String?
    public var description: String?
    /// A pattern (substring, case-insensitive; or `client:port`) for the ALSA port to connect to.
    public var port: String?
    /// Per-channel sampler set-up, in channel order.
    public var channels: [ChannelSetup]
    public var controls: [ControlDefinition]
    /// Where each control starts in the file (same order as `controls`).
    public var locations: [SourceLocation]
    /// Named sets of channel presets, parameter values and control values, in file order.
    public var scenes: [Scene] = []
    /// `tracks:` audio files played with the piece (`track.1.*` is the first),
    /// paths resolved against the mapping file's folder.
    public var tracks: [String] = []
    /// `inserts:` LV2 effects per strip (`master`, `1`…`16`, `osc`, `tone`,
    /// `track1`…), each strip's in file order; before `--insert`'s.
    public var inserts: [MappingInsert] = []
    /// `zones:` the rig's splits and layers while no scene that has its own is current (docs/zones.md).
    public var zones: [Zone] = []
    /// `groups:` the order of the controls' groups on a page (controls name theirs with `group:`).
    public var groups: [String] = []
    /// The most `tracks:` a mapping may list (the mixer's track strips).
    public static let maxTracks = ParameterAddress.maxTracks

    public init(file: String, name: String? = nil, description: String? = nil, port: String? = nil,
                channels: [ChannelSetup] = [], controls: [ControlDefinition] = [], locations: [SourceLocation] = [])
    {
        self.file = file
        self.name = name
        self.description = description
        self.port = port
        self.channels = channels
        self.controls = controls
        self.locations = locations
    }
}

/// An LV2 effect a mapping puts on a strip (`inserts: { master: [URI] }`), as `--insert STRIP=URI`.
public struct MappingInsert: Hashable, Sendable {
    /// `master` or a strip's key (`StripID.key`: `3`, `osc`, `tone`, `track1`).
    public var strip: String
    public var uri: String
    public init(strip: String, uri: String) { self.strip = strip; self.uri = uri }

    /// The keys a strip is named by: `master` and every strip's but the effect returns'.
    public static let stripKeys = ["master"] + ParameterAddress.StripID.all.filter { $0 != .reverb && $0 != .chorus }.map(\.key)
}

/// A named set a mapping switches to at once (by a control targeting
/// `scene.select`, or by name): channel presets, parameter values, control
/// values. Nothing is reloaded: presets are chosen from the fonts already
/// loaded, by bank select and program change, as a keyboard would.
public struct Scene: Hashable, Sendable {
    public struct Setting: Hashable, Sendable {
        public var address: ParameterAddress
        /// In the parameter's own unit.
        public var value: Double
        public init(_ address: ParameterAddress, _ value: Double) { self.address = address; self.value = value }
    }

    public var name: String
    /// Bank (0…127 by bank select, or 128 on channel 10) and program per channel.
    public var channels: [ChannelSetup]
    /// Parameter values, in file order.
    public var settings: [Setting]
    /// Control values by control name, in the control's range and unit.
    public var controls: [(name: String, value: Double)] {
        get { controlValues.map { ($0.name, $0.value) } }
        set { controlValues = newValue.map { ControlValue(name: $0.name, value: $0.value) } }
    }
    private var controlValues: [ControlValue]
    public var location: SourceLocation
    /// The scene's own `zones:`, which replace the top level's while it is current; nil: the top level's stay.
    public var zones: [Zone]?

    private struct ControlValue: Hashable, Sendable { var name: String; var value: Double }

    public init(name: String, channels: [ChannelSetup] = [], settings: [Setting] = [],
                controls: [(name: String, value: Double)] = [], location: SourceLocation) {
        self.name = name
        self.channels = channels
        self.settings = settings
        self.controlValues = controls.map { ControlValue(name: $0.name, value: $0.value) }
        self.location = location
    }
}

extension ControlMapping {
    /// The zones in force while `scene` (an index into `scenes`, nil: none chosen) is current.
    public func zones(inScene scene: Int?) -> [Zone] {
        guard let scene, scenes.indices.contains(scene), let own = scenes[scene].zones else { return zones }
        return own
    }
}

/// A place in a file, 1-based.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }
    public var description: String { line > 0 ? "\(file):\(line):\(column)" : file }
}

/// One mistake in a mapping file.
public struct MappingDiagnostic: Hashable, Sendable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String
    public init(_ location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }
    /// `file:line:column: error: message`, as compilers print it.
    public var description: String { "\(location): error: \(message)" }
}

/// Every mistake found in a mapping file; nothing from that file is used.
public struct MappingError: Error, Hashable, Sendable, CustomStringConvertible {
    public var diagnostics: [MappingDiagnostic]
    public init(_ diagnostics: [MappingDiagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
