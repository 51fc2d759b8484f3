import MIDI
import Parameters

/// What sort of widget a control is.
public enum ControlKind: String, Hashable, Sendable, CaseIterable {
    /// Absolute position: a fader.
    case fader
    /// Absolute position: a knob (the same as a fader, shown round).
    case knob
    /// Relative steps: an endless encoder.
    case encoder
    /// Flips between off and on at each press (or follows the controller's own latch).
    case toggle
    /// 1 while held, 0 when released.
    case button
    /// 1 for one render block after a press, then 0 (see `ControlSurface.tick()`).
    case momentary
    /// Note on with velocity (0...1), note off gives 0.
    case pad
    /// One of N steps (a program change, or a CC split into N bands).
    case selector
    /// Output only: a value the engine sets (a meter, the tempo).
    case readout

    /// Controls whose value follows an absolute position from the hardware.
    public var isAbsolute: Bool {
        switch self {
        case .fader, .knob, .selector: true
        default: false
        }
    }
}

/// Where a control sends its value, and over which range.
public struct TargetBinding: Hashable, Sendable {
    public var address: ParameterAddress
    /// The target's value at the bottom and top of the control's travel. Nil:
    /// follow the control's own value when the control has an explicit range
    /// (or selector values), else the parameter's full range.
    public var range: ValueRange?

    public init(_ address: ParameterAddress, range: ValueRange? = nil) {
        self.address = address
        self.range = range
    }
}

/// From `from` (position 0) to `to` (position 1); `from` may be the larger.
public struct ValueRange: Hashable, Sendable {
    public var from: Double
    public var to: Double
    public init(_ from: Double, _ to: Double) { self.from = from; self.to = to }
    public var lower: Double { min(from, to) }
    public var upper: Double { max(from, to) }
    public func scale(_ shaped: Double) -> Double { from + shaped * (to - from) }
    public func unscale(_ value: Double) -> Double {
        to == from ? 0 : min(max((value - from) / (to - from), 0), 1)
    }
}

/// A control as a mapping file describes it: the static half of a control.
public struct ControlDefinition: Hashable, Sendable {
    public var name: String
    public var kind: ControlKind
    /// Nil only for readouts.
    public var source: ControlSource?
    public var shaping: Shaping
    /// The control's own value range and unit. Nil: the first target's range and unit.
    public var range: ValueRange?
    public var unit: ParameterUnit?
    /// The value before anything moves the control, in its range; nil: the first target's default.
    public var defaultValue: Double?
    public var targets: [TargetBinding]
    /// Absolute controls: ignore the hardware until it reaches the current value.
    public var softTakeover: Bool
    /// Encoders: how steps are written, how many steps cross the full range,
    /// and how much faster big steps move (|steps|^(1 + acceleration)).
    public var encoding: RelativeEncoding
    public var encoderResolution: Int
    public var acceleration: Double
    /// Toggles: the controller latches by itself (sends on, then off, on alternate presses).
    public var followsValue: Bool
    /// Selectors: the value of each step (its count is the number of steps).
    public var selectorValues: [Double]?
    /// Readouts: the parameter shown, if any (else set by name).
    public var readoutParameter: ParameterAddress?
    /// Send the control's state back to its controller when it changes
    /// elsewhere (`feedback: false` in a mapping turns it off).
    public var feedback: Bool
    /// Where the control sits on a page: the mapping's `group:` (nil: by what it drives, `ControlGroup.arrange`).
    public var group: String?
    /// One part of an xy pad (`kind: xy` in a mapping): its x or y axis, or its touch.
    public var pad: PadPart?

    public init(
        name: String, kind: ControlKind, source: ControlSource?, shaping: Shaping = .linear,
        range: ValueRange? = nil, unit: ParameterUnit? = nil, defaultValue: Double? = nil,
        targets: [TargetBinding] = [], softTakeover: Bool? = nil,
        encoding: RelativeEncoding = .twosComplement, encoderResolution: Int = 127, acceleration: Double = 0,
        followsValue: Bool = false, selectorValues: [Double]? = nil, readoutParameter: ParameterAddress? = nil,
        feedback: Bool = true
    ) {
        self.name = name
        self.kind = kind
        self.source = source
        self.shaping = shaping
        self.range = range
        self.unit = unit
        self.defaultValue = defaultValue
        self.targets = targets
        self.softTakeover = softTakeover ?? (kind == .fader || kind == .knob)
        self.encoding = encoding
        self.encoderResolution = encoderResolution
        self.acceleration = acceleration
        self.followsValue = followsValue
        self.selectorValues = selectorValues
        self.readoutParameter = readoutParameter
        self.feedback = feedback
    }

    /// The number of selector steps (values count, else shaping steps, else 128).
    public var selectorSteps: Int { selectorValues?.count ?? shaping.steps ?? 128 }
}

/// An xy pad is three controls of the surface, shown as one square on a page:
/// the x axis and the y axis (faders with no source, `NAME x`, `NAME y`) and
/// the touch (a button, `NAME touch`: 1 while a finger is on the pad, on
/// `channel.N.gate` for every `channel.N.note` an axis drives, and on the
/// mapping's `targets-touch`).
public struct PadPart: Hashable, Sendable {
    public enum Part: String, Hashable, Sendable { case x, y, touch }
    /// The pad's name in the mapping.
    public var name: String
    public var part: Part
    public init(name: String, part: Part) { self.name = name; self.part = part }
}
