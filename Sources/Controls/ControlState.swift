import ControlDefinitions
import Parameters
/// A snapshot of one control, for a view: what it is, where it is, and what it shows.
public struct ControlState: Hashable, Sendable {
    public var name: String
    public var kind: ControlKind
    /// The value in the control's own range and unit.
    public var value: Double
    /// Where the control is along its travel, 0...1 (before shaping).
    public var position: Double
    public var range: ValueRange
    public var unit: ParameterUnit
    /// The value as a person reads it: "-6.0 dB", "on", "12".
    public var display: String
    /// True while soft takeover waits for the hardware to reach the value.
    public var awaitingPickup: Bool
    public var source: ControlSource?
    public var targets: [ParameterAddress]
}
