#if canImport(Glibc)
import Glibc
#endif

/// Finds the SoundFont to load, in this order (soundfonts/README.md):
/// 1. the path the user gave (`--soundfont`),
/// 2. `$CARILLON_SOUNDFONT`,
/// 3. the first `.sf2`/`.sf3`, by name, in the repository's `soundfonts/`
///    folder, other than the project's own test font,
/// 4. the system's General MIDI fonts (`systemFonts`, in order),
/// 5. the project's own test font, `soundfonts/carillon-test.sf2`: it is
///    committed, so it would otherwise always win over a real GM font; last,
///    it still makes a fresh clone sound without any package.
public struct SoundFontLocator: Sendable {
    public static let environmentVariable = "CARILLON_SOUNDFONT"
    /// The small font `scripts/make-soundfont` builds into `soundfonts/`.
    public static let projectFontName = "carillon-test.sf2"
    public static let systemFonts = [
        "/usr/share/sounds/sf2/default-GM.sf2",
        "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/sounds/sf2/TimGM6mb.sf2",
    ]
    public static let installHint = "sudo apt-get install fluid-soundfont-gm"

    public var explicitPath: String?
    public var environment: String?
    public var repositoryFolder: String?
    public var systemPaths: [String]

    public init(explicitPath: String? = nil,
                environment: String? = getenv(SoundFontLocator.environmentVariable).map { String(cString: $0) },
                repositoryFolder: String? = SoundFontLocator.defaultRepositoryFolder(),
                systemPaths: [String] = SoundFontLocator.systemFonts) {
        self.explicitPath = explicitPath
        self.environment = environment.flatMap { $0.isEmpty ? nil : $0 }
        self.repositoryFolder = repositoryFolder
        self.systemPaths = systemPaths
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The path the user named does not exist: no fallback, say so.
        case explicitNotFound(String, source: String)
        /// Nothing anywhere; lists every place tried.
        case noneFound(tried: [String])

        public var description: String {
            switch self {
            case .explicitNotFound(let path, let source):
                "SoundFont not found: \(path) (from \(source))"
            case .noneFound(let tried):
                "no SoundFont found; tried: " + tried.joined(separator: ", ")
                    + ". Install one with `\(SoundFontLocator.installHint)` or pass --soundfont FILE"
            }
        }
    }

    /// The SoundFont's path. A path given explicitly (option or environment)
    /// must exist: it is never silently replaced by a fallback.
    public func locate() throws(Failure) -> String {
        if let explicitPath {
            guard Self.exists(explicitPath) else { throw .explicitNotFound(explicitPath, source: "--soundfont") }
            return explicitPath
        }
        if let environment {
            guard Self.exists(environment) else { throw .explicitNotFound(environment, source: "$\(Self.environmentVariable)") }
            return environment
        }
        var tried = ["--soundfont (not given)", "$\(Self.environmentVariable) (not set)"]
        if let folder = repositoryFolder {
            if let font = Self.firstFont(in: folder) { return font }
            tried.append("\(folder)/*.sf2, *.sf3")
        }
        for path in systemPaths {
            if Self.exists(path) { return path }
            tried.append(path)
        }
        if let folder = repositoryFolder {
            let projectFont = "\(folder)/\(Self.projectFontName)"
            if Self.exists(projectFont) { return projectFont }
            tried.append(projectFont)
        }
        throw .noneFound(tried: tried)
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR
    }

    /// The first font by name in `folder`, the project's test font aside.
    static func firstFont(in folder: String) -> String? {
        guard let dir = opendir(folder) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            let lower = name.lowercased()
            guard name != projectFontName else { continue }
            if lower.hasSuffix(".sf2") || lower.hasSuffix(".sf3") { names.append(name) }
        }
        return names.sorted().map { "\(folder)/\($0)" }.first { exists($0) }
    }

    /// `soundfonts/` of the repository: beside the `Package.swift` found by
    /// walking up from the executable (a build tree) or the working directory;
    /// else, for an installed binary (`scripts/install`), `PREFIX/share/carillon/soundfonts`
    /// beside its `PREFIX/bin`.
    public static func defaultRepositoryFolder() -> String? {
        var starts: [String] = []
        var executable: String?
        if let exe = realpath("/proc/self/exe", nil) { executable = String(cString: exe); free(exe) }
        if let executable { starts.append(executable) }
        if let cwd = getcwd(nil, 0) { starts.append(String(cString: cwd) + "/."); free(cwd) }
        for start in starts {
            var dir = start
            while let slash = dir.lastIndex(of: "/"), slash != dir.startIndex {
                dir = String(dir[..<slash])
                if exists(dir + "/Package.swift") { return dir + "/soundfonts" }
            }
        }
        if let executable, let slash = executable.lastIndex(of: "/") {
            let installed = String(executable[..<slash]) + "/../share/carillon/soundfonts"
            var info = stat()
            if stat(installed, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { return installed }
        }
        return nil
    }
}
