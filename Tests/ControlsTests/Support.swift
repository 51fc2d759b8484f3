import Controls
import MIDI
import MappingFiles
import Parameters

/// Collects what a surface publishes.
final class Recorder {
    var changes: [ParameterChange] = []
    init(_ surface: ControlSurface) {
        surface.subscribe { [unowned self] in self.changes.append($0) }
    }
    func values(_ address: ParameterAddress) -> [Float] { changes.filter { $0.address == address }.map(\.value) }
    var last: ParameterChange? { changes.last }
    func clear() { changes.removeAll() }
}

func cc(_ controller: Int, _ value: Int, ch: Int = 1) -> MIDIMessage {
    .cc(UInt7(controller), value: UInt7(value), channel: Channel(ch - 1))
}

func approx(_ a: Double, _ b: Double, _ tolerance: Double = 1e-6) -> Bool { abs(a - b) <= tolerance }
func approx(_ a: Float, _ b: Float, _ tolerance: Float = 1e-4) -> Bool { abs(a - b) <= tolerance }

extension ControlSurface {
    /// A surface from mapping text (the test fails loudly if it does not load).
    static func fromYAML(_ yaml: String) throws -> ControlSurface {
        ControlSurface(mapping: try ControlMapping.parse(yaml: yaml, file: "test.yaml"))
    }
}
