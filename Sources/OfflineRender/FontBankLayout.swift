/// Where each font of a piece drawn across a SoundFont set (`--timbres` with
/// several `--soundfont`s) sits in one FluidSynth synth's bank numbers, so
/// plain bank selects and program changes reach any font's preset.
///
/// FluidSynth looks a channel's (bank, program) up font by font, the last
/// loaded first, asking each font for `bank - offset`
/// (`fluid_synth_set_bank_offset`, `fluid_synth_find_preset`, 2.3). Bank
/// select (GS, FluidSynth's default style) reaches banks 0...127 on a
/// melodic channel; a drum channel ignores it and always asks for bank 128
/// (`fluid_channel_set_bank_msb`, 2.3.1). So:
///
/// - the file's own font (`home`: the one `--soundfont-pick hash` picks for
///   it) sits at offset 0, its melodic banks at 0...its highest: its kits
///   are the piece's drum kits, and a track that draws nothing keeps its
///   instrument from it;
/// - every other font sits after the one before it, its banks 0...its
///   highest moved up by its offset: the fonts' ranges never overlap, so
///   only the font a bank select aims at has a preset there (another font
///   is asked for a bank below 0 or above its highest: none);
/// - another font's kits (bank 128 + offset) are out of every channel's
///   reach: a piece's drum kits come from one font.
///
/// With one font, its offset is 0: the piece is that font's alone.
public struct FontBankLayout: Sendable, Equatable {
    /// Per font, in the fonts' order: the offset its banks are moved up by.
    public let offsets: [Int]
    /// The font at offset 0 (its kits are the piece's drum kits).
    public let home: Int

    /// `melodicBanks`: per font, the banks 0...127 its presets are in
    /// (a font with none takes no room). Throws when the fonts' ranges do not
    /// fit in bank select's 0...127 together.
    public init(melodicBanks: [[Int]], names: [String], home: Int) throws(FontBankLayoutError) {
        precondition(melodicBanks.indices.contains(home) && names.count == melodicBanks.count)
        /// Banks a font takes: 0 through its highest.
        func room(_ f: Int) -> Int { (melodicBanks[f].filter { (0...127).contains($0) }.max() ?? -1) + 1 }
        var offsets = [Int](repeating: 0, count: melodicBanks.count)
        var next = room(home)
        for f in melodicBanks.indices where f != home {
            offsets[f] = next
            next += room(f)
        }
        guard next <= 128 else {
            throw FontBankLayoutError(rooms: melodicBanks.indices.map { (names[$0], room($0)) }, needed: next)
        }
        self.offsets = offsets
        self.home = home
    }

    /// One font alone, at offset 0.
    public static let single = FontBankLayout(offsets: [0], home: 0)
    private init(offsets: [Int], home: Int) { self.offsets = offsets; self.home = home }
}

/// The fonts' banks do not fit in bank select's reach side by side.
public struct FontBankLayoutError: Error, Equatable, CustomStringConvertible {
    /// Per font: its name and the banks it takes (0 through its highest melodic bank).
    public var rooms: [(String, Int)]
    public var needed: Int

    public static func == (a: Self, b: Self) -> Bool { a.needed == b.needed && a.rooms.map(\.0) == b.rooms.map(\.0) && a.rooms.map(\.1) == b.rooms.map(\.1) }

    public var description: String {
        let each = rooms.map { "\($0.0): banks 0...\($0.1 - 1)" }.joined(separator: ", ")
        return "--timbres across the fonts needs \(needed) banks side by side (\(each)), and bank select reaches 128; "
            + "give fewer fonts, or fonts with fewer banks, or --soundfont-pick all to render each font on its own"
    }
}
