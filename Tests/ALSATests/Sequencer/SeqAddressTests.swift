import ALSA
import Testing

@Suite struct SeqAddressTests {
    @Test func parse_clientColonPort() {
        #expect(SeqAddress("24:0") == SeqAddress(client: 24, port: 0))
        #expect(SeqAddress("128:3")?.description == "128:3")
    }

    @Test(arguments: ["", "24", "24:", ":0", "a:b", "24:0:1", "300:0", "Virtual Raw MIDI 2-0"])
    func parse_rejectsAnythingElse(text: String) {
        #expect(SeqAddress(text) == nil)
    }

    @Test func portInfo_sourceAndHardwareFlags() {
        let virmidi = PortInfo(address: SeqAddress(client: 24, port: 0), clientName: "Virtual Raw MIDI 2-0",
            portName: "VirMIDI 2-0", capabilities: [.read, .write, .subscribeRead, .subscribeWrite],
            type: [.midiGeneric, .software, .port], isKernelClient: true)
        #expect(virmidi.isSource && virmidi.isDestination && virmidi.isHardware)
        #expect(virmidi.capabilities.description == "rwRW")
        let app = PortInfo(address: SeqAddress(client: 128, port: 0), clientName: "carillon", portName: "input",
            capabilities: [.write, .subscribeWrite], type: [.midiGeneric, .application], isKernelClient: false)
        #expect(!app.isSource && !app.isHardware)
        #expect(AutoconnectPolicy.allSources.accepts(virmidi))
        #expect(!AutoconnectPolicy.allSources.accepts(app))
        #expect(AutoconnectPolicy.named("VIRTUAL raw").accepts(virmidi))
        #expect(!AutoconnectPolicy.named("nanokontrol").accepts(virmidi))
    }
}
