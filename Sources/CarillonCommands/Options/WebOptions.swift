import ArgumentParser
import Hosting
import WebSurface

/// `--web [ADDR:]PORT` and `--web-token`, shared by `live` and `play`.
struct WebOptions: ParsableArguments {
    @Option(name: .customLong("web"), help: ArgumentHelp(
        "Serve every control and meter as a web page at [ADDR:]PORT (address 127.0.0.1 unless given; any other address needs a token).",
        valueName: "[addr:]port"))
    var web: String?

    @Option(name: .customLong("web-token"), help: ArgumentHelp(
        "The token the page and every request must carry (16+ letters, digits, - or _); generated and printed when binding beyond loopback without one.",
        valueName: "token"))
    var webToken: String?

    func validate() throws {
        guard let web else {
            if webToken != nil { throw ValidationError("--web-token needs --web") }
            return
        }
        do { _ = try configuration(for: web) } catch { throw ValidationError("--web: \(error)") }
    }

    /// Nil without `--web`. A non-loopback address without `--web-token` gets a generated token.
    var configuration: WebSurfaceConfiguration? {
        get throws {
            guard let web else { return nil }
            return try configuration(for: web)
        }
    }

    private func configuration(for spec: String) throws(WebSurfaceConfiguration.Failure) -> WebSurfaceConfiguration {
        let (host, port) = try WebSurfaceConfiguration.parse(spec)
        var config = WebSurfaceConfiguration(host: host, port: port, token: webToken)
        if config.token == nil && !config.isLoopback { config.token = WebSurfaceConfiguration.generateToken() }
        try config.validate()
        return config
    }
}
