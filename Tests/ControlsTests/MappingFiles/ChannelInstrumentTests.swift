import Controls
import MappingFiles
import Parameters
import Testing

/// A mapping's `channels:` entry may give a channel to the oscillator
/// (`instrument: oscillator`); a bad name is reported where it stands.
@Suite struct ChannelInstrumentTests {
    @Test func instrumentKey_routesTheChannel() throws {
        let yaml = """
            name: Synth on 16
            channels:
              16: { instrument: oscillator }
              1: { program: 0, instrument: sampler }
              2: { program: 5 }
            controls:
              - name: Release
                kind: knob
                source: { cc: 72 }
                targets: [osc.release]
            """
        let mapping = try ControlMapping.parse(yaml: yaml, file: "m.yaml")
        #expect(mapping.channels.map(\.instrument) == [.sampler, nil, .oscillator])
    }

    @Test func unknownInstrument_reportedWithLineAndColumn() {
        let yaml = """
            name: Typo
            channels:
              16: { instrument: oscilator }
            controls: []
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:3:21: error: unknown instrument 'oscilator' (instruments: sampler, oscillator)",
        ])
    }

    @Test func oscParameters_parseAndPrint() {
        for p in ParameterAddress.Osc.allCases {
            let text = "osc.\(p.rawValue)"
            #expect(ParameterAddress(text)?.description == text)
        }
        #expect(ParameterAddress("tone.note") == .tone(.note))
        #expect(ParameterAddress("tone.a4") == .tone(.a4))
        #expect(ParameterAddress("osc.volume") == nil)
    }
}
