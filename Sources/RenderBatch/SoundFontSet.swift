import OfflineRender
/// The SoundFonts a render plays with (`--soundfont`, repeatable) and which
/// of them renders each input (`--soundfont-pick`):
///
/// - `hash`: one font per input, `fonts[h % count]` with `h` drawn from the
///   input's key (its path relative to the batch's root, as `Shard` hashes
///   it), so the choice does not depend on the list's order, on `--jobs`,
///   on `--shard` or on the run. The outputs keep their names.
/// - `all`: every input with every font, into `NAME.FONTNAME.EXT` (stems
///   and labels named alike, see `renderings`).
///
/// With one font and `hash` (the default), nothing differs from a render
/// with that font alone.
public struct SoundFontSet: Sendable, Equatable {
    public enum Pick: String, CaseIterable, Sendable { case hash, all }

    public struct Font: Sendable, Equatable {
        public var path: String
        /// The file name without its extension, made safe for a file name: the
        /// FONTNAME of `NAME.FONTNAME.EXT`.
        public var name: String
        /// The file name as it is (`TimGM6mb.sf2`): the labels' `soundfont` column.
        public var fileName: String

        public init(path: String) {
            self.path = path
            fileName = path.split(separator: "/").last.map(String.init) ?? path
            name = Self.safeName(fileName)
        }

        /// `fileName` without its extension, every character but letters,
        /// digits, `.`, `-`, `_` and `+` replaced by `_` (`My Font (v2).sf2`
        /// is `My_Font__v2_`).
        static func safeName(_ fileName: String) -> String {
            var base = Substring(fileName)
            if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = base[..<dot] }
            let safe = String(base.map { $0.isLetter || $0.isNumber || "._-+".contains($0) ? $0 : "_" })
            return safe.isEmpty ? "_" : safe
        }
    }

    public let fonts: [Font]
    public let pick: Pick

    /// The fonts at `paths` (already located). Two fonts whose names are the
    /// same (without regard to case: a case-insensitive file system would take
    /// their outputs for one) are refused, whatever the pick: the labels and
    /// the outputs of `all` name a font by its name alone.
    public init(paths: [String], pick: Pick = .hash) throws(SoundFontSetError) {
        precondition(!paths.isEmpty, "a render has a SoundFont")
        let fonts = paths.map(Font.init)
        var seen: [String: String] = [:]
        for font in fonts {
            if let first = seen[font.name.lowercased()] {
                throw first == font.path ? .givenTwice(path: font.path) : .sameName(name: font.name, first: first, second: font.path)
            }
            seen[font.name.lowercased()] = font.path
        }
        self.fonts = fonts
        self.pick = pick
    }

    /// The font (index in `fonts`) `hash` picks for the input keyed `key`.
    ///
    /// The draw reuses the shard's FNV-1a of the key, salted and then mixed
    /// (MurmurHash3's 64-bit finaliser) before the remainder: with FNV-1a the
    /// low bits of a hash depend only on the low bits of the state and of the
    /// bytes, so `fnv1a64(salt + key) % 2` is `fnv1a64(key) % 2` or its
    /// opposite for every key, and with 2 shards and 2 fonts each shard
    /// would get one font only. The mix makes the font independent of the shard.
    public static func pickIndex(key: String, count: Int) -> Int {
        precondition(count > 0)
        return Int(mix(Shard.fnv1a64(key) ^ salt) % UInt64(count))
    }

    /// Sets the draw apart from the shard's (and any other drawn from the key).
    static let salt = Shard.fnv1a64("carillon --soundfont-pick")

    /// MurmurHash3's `fmix64`: every bit of the result depends on every bit of `h`.
    static func mix(_ h: UInt64) -> UInt64 {
        var h = h
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }

    /// The fonts (indices in `fonts`) that render the input keyed `key`.
    public func picks(forKey key: String) -> [Int] {
        switch pick {
        case .hash: [Self.pickIndex(key: key, count: fonts.count)]
        case .all: Array(fonts.indices)
        }
    }

    /// The renderings of `items` (one item per input): with `hash`, each item
    /// with its font, as it is; with `all`, an item per input and font, its
    /// output `NAME.FONTNAME.EXT` (`-o song.wav` too: `song.FONTNAME.wav`),
    /// its stems folder `DIR.FONTNAME` (the output's path without extension,
    /// as for any batch), or `DIR/FONTNAME` for stems that go into the
    /// `--stems` folder itself (`stemsInTheirOwnFolder`: one MIDI file
    /// named), and its labels, named after its output, beside it. Two
    /// renderings with one output are refused.
    public func renderings(of items: [BatchItem], stemsInTheirOwnFolder: Bool = false) throws(BatchPlanError) -> [BatchItem] {
        var renderings: [BatchItem] = []
        for item in items {
            for index in picks(forKey: item.key) {
                var rendering = item
                rendering.soundFont = index
                if pick == .all {
                    let name = fonts[index].name
                    rendering.output = Self.inserting(name, into: item.output)
                    rendering.stems = item.stems.map { stemsInTheirOwnFolder ? ($0.hasSuffix("/") ? $0 + name : "\($0)/\(name)") : "\($0).\(name)" }
                }
                renderings.append(rendering)
            }
        }
        guard pick == .all else { return renderings }
        var byOutput: [String: String] = [:]
        for r in renderings {
            if let first = byOutput[r.output] { throw .sameOutput(output: r.output, first: first, second: r.input) }
            byOutput[r.output] = r.input
        }
        return renderings
    }

    /// `path` with `.name` before its extension (`out/song.wav` → `out/song.NAME.wav`;
    /// without an extension, at its end).
    static func inserting(_ name: String, into path: String) -> String {
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[nameStart...].lastIndex(of: "."), dot != nameStart else { return "\(path).\(name)" }
        return "\(path[..<dot]).\(name)\(path[dot...])"
    }
}

public enum SoundFontSetError: Error, Equatable, CustomStringConvertible {
    case givenTwice(path: String)
    case sameName(name: String, first: String, second: String)

    public var description: String {
        switch self {
        case .givenTwice(let path): "--soundfont \(path) is given twice"
        case .sameName(let name, let first, let second):
            "--soundfont \(first) and \(second) have the same name, \(name) (case aside), and outputs and labels "
                + "tell fonts apart by name: link or copy one under another name"
        }
    }
}
