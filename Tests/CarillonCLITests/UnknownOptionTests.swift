import Foundation
import Testing

/// A mistyped option is named as unknown (with the closest long option) on
/// every subcommand, also when a value follows it: that value must not be
/// taken for an input and answered with the complaint it causes.
@Suite struct UnknownOptionTests {
    static let song = "\(RenderCommandTests.openmsx)/train_filled_with_cash.mid"
    static let mapping = ParametersCommandTests.repository.appendingPathComponent("mappings/general-midi.yaml").path

    /// A command line, the option it mistypes and what ArgumentParser should suggest (nil: none).
    struct Case: CustomTestStringConvertible, Sendable {
        let arguments: [String], unknown: String, suggestion: String?
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        // The example: the value made a second input, so "-o names one file" came first.
        Case(arguments: ["render", song, "--reverb-lvl", "0.3", "-o", "x.wav"], unknown: "--reverb-lvl", suggestion: "--reverb-level"),
        Case(arguments: ["render", song, "-Q", "3", "-o", "x.wav"], unknown: "-Q", suggestion: nil),
        Case(arguments: ["render", "--bogus", song, "-o", "x.wav", song], unknown: "--bogus", suggestion: "--bits"),
        Case(arguments: ["render", song, "--output-dri", "out", "--stems", "s"], unknown: "--output-dri", suggestion: "--output-dir"),
        Case(arguments: ["play", song, "--reverb-lvl", "0.3"], unknown: "--reverb-lvl", suggestion: "--reverb-level"),
        Case(arguments: ["play", song, "-Q", "3"], unknown: "-Q", suggestion: nil),
        Case(arguments: ["live", "--reverb-lvl", "0.3"], unknown: "--reverb-lvl", suggestion: "--reverb-level"),
        Case(arguments: ["live", "-Q", "3"], unknown: "-Q", suggestion: nil),
        Case(arguments: ["inspect", song, "--jsn", "3"], unknown: "--jsn", suggestion: "--json"),
        Case(arguments: ["inspect", song, "-Q", "3"], unknown: "-Q", suggestion: nil),
        Case(arguments: ["mapping", "check", mapping, "--explian", "3"], unknown: "--explian", suggestion: "--explain"),
        Case(arguments: ["mapping", "check", mapping, "-Q", "3"], unknown: "-Q", suggestion: nil),
        Case(arguments: ["parameters", "--mrkdown", "x"], unknown: "--mrkdown", suggestion: "--markdown"),
        Case(arguments: ["parameters", "-Q", "x"], unknown: "-Q", suggestion: nil),
        // An option that takes a value (the others' options taking one are covered above; inspect,
        // plugins, ports and mapping check have flags only), the group command, and help.
        Case(arguments: ["parameters", "--insrt", "master=urn:x"], unknown: "--insrt", suggestion: "--insert"),
        Case(arguments: ["mapping", "--explian", "3"], unknown: "--explian", suggestion: nil),
        Case(arguments: ["help", "--bogus", "3"], unknown: "--bogus", suggestion: nil),
        Case(arguments: ["plugins", "--jsn", "x"], unknown: "--jsn", suggestion: "--json"),
        Case(arguments: ["plugins", "-Q", "x"], unknown: "-Q", suggestion: nil),
        Case(arguments: ["ports", "--al", "x"], unknown: "--al", suggestion: "--all"),
        Case(arguments: ["ports", "-Q", "x"], unknown: "-Q", suggestion: nil),
    ]

    @Test(arguments: cases) func unknownOption_isNamed_withItsSuggestion(_ c: Case) throws {
        let r = try RenderCommandTests.carillon(c.arguments)
        #expect(r.status == 64, "\(r.stderr)")
        let first = r.stderr.split(separator: "\n").first.map(String.init) ?? ""
        let expected = "Error: Unknown option '\(c.unknown)'" + (c.suggestion.map { ". Did you mean '\($0)'?" } ?? "")
        #expect(first == expected)
        #expect(r.stderr.contains("Usage: carillon \(c.arguments[0])"))
        #expect(r.stdout.isEmpty)
    }

    /// Options that exist, with values that look like options or inputs, are not taken for unknown ones.
    @Test func knownOptions_withTheirValues_stillReachValidation() throws {
        let r = try RenderCommandTests.carillon(["render", Self.song, Self.song, "--normalize", "-14", "-o", "x.wav"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: -o names one file; with several inputs use --output-dir"), "\(r.stderr)")
    }
}
