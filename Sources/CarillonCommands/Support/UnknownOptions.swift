import ArgumentParser
import Foundation
import Parameters

/// Unknown options named before anything else. ArgumentParser runs a
/// command's `validate()` before it looks for options it did not match, so a
/// mistyped option with a value (`render song.mid --reverb-lvl 0.3 -o x.wav`:
/// the value taken for a second input) was answered with the validation's
/// complaint ("-o names one file …"). When parsing fails with a usage error,
/// the command line is read again against the command's own options (its
/// `--experimental-dump-help` description): an option it does not have is
/// reported as ArgumentParser reports one, with the closest long name.
enum UnknownOptions {
    /// One command of the tree: its options' names and which take a value.
    struct Command {
        var type: ParsableCommand.Type
        var path: [String]
        /// `--name`, `-n`, each with whether it takes a value (and how).
        var options: [String: Takes]
        var subcommands: [String: Command]
    }
    enum Takes { case nothing, value, unconditionalValue }

    /// Runs the root command as `ParsableCommand.main` does, but for the order of the errors.
    static func main(_ root: ParsableCommand.Type) -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try root.parseAsRoot(arguments)
            try command.run()
            root.exit()
        } catch {
            if root.exitCode(for: error) == .validationFailure,
               !root.message(for: error).hasPrefix("Unknown option"),
               let message = unknownOptionMessage(root, arguments: arguments) {
                FileHandle.standardError.write(Data((message + "\n").utf8))
                Foundation.exit(ExitCode.validationFailure.rawValue)
            }
            root.exit(withError: error)
        }
    }

    /// The full error text for the first option `arguments` gives that its
    /// command does not have, nil when every one is known.
    static func unknownOptionMessage(_ root: ParsableCommand.Type, arguments: [String]) -> String? {
        guard let tree = tree(root) else { return nil }
        var command = tree
        var index = 0
        // The subcommands named first.
        while index < arguments.count, let sub = command.subcommands[arguments[index]] {
            command = sub
            index += 1
        }
        guard let unknown = firstUnknown(in: arguments[index...], options: command.options) else { return nil }
        var text = "Unknown option '\(unknown)'"
        if unknown.hasPrefix("--") {
            let suggestion = command.options.keys.filter { $0.hasPrefix("--") }
                .map { ($0, EditDistance.distance($0, unknown)) }
                .filter { $0.1 < 4 }
                .min { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
            if let suggestion { text += ". Did you mean '\(suggestion.0)'?" }
        }
        let name = (["carillon"] + command.path).joined(separator: " ")
        return """
            Error: \(text)
            Usage: \(root.usageString(for: command.type))
              See '\(name) --help' for more information.
            """
    }

    /// The first option not in `options` (`--name`, `--name=value`, `-x`, or
    /// single-letter flags run together, `-vq`); an option's value is skipped,
    /// and nothing after `--` is an option.
    static func firstUnknown(in arguments: ArraySlice<String>, options: [String: Takes]) -> String? {
        var i = arguments.startIndex
        while i < arguments.endIndex {
            let argument = arguments[i]
            i += 1
            if argument == "--" { return nil }
            guard argument.hasPrefix("-"), argument.count > 1, Double(argument) == nil else { continue }
            let name = String(argument.prefix { $0 != "=" })
            if argument.hasPrefix("--") || options[name] != nil {
                guard let takes = options[name] else { return name }
                if takes != .nothing && !argument.contains("=") { i = skipValue(arguments, i, takes, options) }
                continue
            }
            // A short option, or several flags run together.
            let letters = argument.dropFirst().map { "-\($0)" }
            for (k, letter) in letters.enumerated() {
                guard let takes = options[letter] else { return letter }
                if takes != .nothing {
                    // The rest of the word is the value (-o5), or the next argument is.
                    if k == letters.count - 1 { i = skipValue(arguments, i, takes, options) }
                    break
                }
            }
        }
        return nil
    }

    private static func skipValue(_ arguments: ArraySlice<String>, _ i: Int, _ takes: Takes, _ options: [String: Takes]) -> Int {
        guard i < arguments.endIndex else { return i }
        let next = arguments[i]
        if takes == .unconditionalValue || !next.hasPrefix("-") || Double(next) != nil { return i + 1 }
        return i
    }

    /// The command tree with each command's options, from ArgumentParser's own description.
    static func tree(_ root: ParsableCommand.Type) -> Command? {
        guard let data = root._dumpHelp().data(using: .utf8),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let command = json["command"] as? [String: Any] else { return nil }
        return read(command, type: root, path: [])
    }

    private static func read(_ json: [String: Any], type: ParsableCommand.Type, path: [String]) -> Command {
        var options: [String: Takes] = ["--help": .nothing, "-h": .nothing]
        if path.isEmpty { options["--version"] = .nothing }
        for argument in json["arguments"] as? [[String: Any]] ?? [] {
            let kind = argument["kind"] as? String
            guard kind == "option" || kind == "flag" else { continue }
            let takes: Takes = kind == "flag" ? .nothing
                : argument["parsingStrategy"] as? String == "unconditional" ? .unconditionalValue : .value
            for name in argument["names"] as? [[String: Any]] ?? [] {
                guard let text = name["name"] as? String else { continue }
                options[(name["kind"] as? String == "short" || name["kind"] as? String == "longWithSingleDash" ? "-" : "--") + text] = takes
            }
        }
        var subcommands: [String: Command] = [:]
        let types = type.configuration.subcommands
        for sub in json["subcommands"] as? [[String: Any]] ?? [] {
            guard let name = sub["commandName"] as? String,
                  let subType = types.first(where: { $0._commandName == name }) else { continue }
            subcommands[name] = read(sub, type: subType, path: path + [name])
        }
        return Command(type: type, path: path, options: options, subcommands: subcommands)
    }
}
