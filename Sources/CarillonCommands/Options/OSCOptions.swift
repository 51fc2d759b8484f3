import ArgumentParser
import OSC

/// `--osc [ADDR:]PORT` and `--osc-allow CIDR`, shared by `live` and `play`.
struct OSCOptions: ParsableArguments {
    @Option(name: .customLong("osc"), help: ArgumentHelp(
        "Take OSC messages over UDP at [ADDR:]PORT (address 127.0.0.1 unless given; any other address needs --osc-allow). See docs/osc.md.",
        valueName: "[addr:]port"))
    var osc: String?

    @Option(name: .customLong("osc-allow"), help: ArgumentHelp(
        "A network whose OSC packets are taken besides loopback, ADDR/BITS (repeat for more); others are refused and counted.",
        valueName: "cidr"))
    var oscAllow: [String] = []

    func validate() throws {
        guard osc != nil else {
            if !oscAllow.isEmpty { throw ValidationError("--osc-allow needs --osc") }
            return
        }
        do { _ = try configuration } catch { throw ValidationError("--osc: \(error)") }
    }

    /// Nil without `--osc`.
    var configuration: OSCConfiguration? {
        get throws(OSCError) {
            guard let osc else { return nil }
            var allowed: [OSCNetwork] = []
            for cidr in oscAllow { allowed.append(try OSCNetwork.parse(cidr)) }
            let config = OSCConfiguration(endpoint: try OSCEndpoint.parse(osc), allowed: allowed)
            try config.validate()
            return config
        }
    }
}
