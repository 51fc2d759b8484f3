import CFluidSynth
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A SoundFont that exists only for FluidSynth: a `SoundFontFile`'s bytes
/// with its `pdta` list replaced by a rebuilt one (and the RIFF size to
/// match). Everything else — sample data included, at the same offsets, so
/// the sample headers stay right — is read from the file when FluidSynth
/// asks; the rebuilt list is served from memory. Any chunk order works: the
/// view is a list of segments.
///
/// FluidSynth opens a view by `name` through the file callbacks every
/// `Synth` installs (`VirtualSoundFontLoader`): at load, and again each time
/// it loads samples on demand (a pin, a program change), from whichever
/// thread does that. So a view answers to its name for as long as it lives,
/// and every `SoundFont` loaded from it keeps it alive. Each view has a name
/// of its own: FluidSynth's sample cache, keyed by file name, never mixes two
/// views' samples, and synths that load the same view share them.
public final class VirtualSoundFont: Sendable {
    /// What FluidSynth opens it by: the file's path with a suffix of the view's own.
    public let name: String
    public let file: SoundFontFile
    let content: Content

    init(file: SoundFontFile, presetData: [UInt8]) {
        let number = Self.made.add(1, ordering: .relaxed).newValue
        self.file = file
        name = "\(file.path)#carillon-view-\(number)"
        content = Content(file: file, presetData: presetData)
        let (name, content) = (name, content)
        Self.registry.withLock { $0[name] = content }
    }

    deinit {
        let name = name
        Self.registry.withLock { $0[name] = nil }
    }

    /// Bytes of the whole view, as FluidSynth sees it.
    public var size: Int { content.size }
    /// The rebuilt `pdta` list, header included.
    public var presetData: [UInt8] { content.presetData }

    /// Reads `count` bytes of the view at `offset` into `buffer`; false past its end or at a read error. Any thread.
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Bool {
        content.read(into: buffer, count: count, at: offset)
    }

    private static let made = Atomic<Int>(0)
    /// The views alive, by name: the file callbacks have no user data, so they look views up here.
    static let registry = Mutex<[String: Content]>([:])

    /// A view's bytes: where each part comes from.
    final class Content: Sendable {
        enum Segment: Sendable {
            case file(offset: Int, length: Int)
            case memory([UInt8])

            var length: Int {
                switch self {
                case .file(_, let length): length
                case .memory(let bytes): bytes.count
                }
            }
        }

        let file: SoundFontFile
        let segments: [Segment]
        /// Where each segment starts in the view.
        let starts: [Int]
        let size: Int
        let presetData: [UInt8]

        init(file: SoundFontFile, presetData: [UInt8]) {
            self.file = file
            self.presetData = presetData
            var segments: [Segment] = [.memory([])]   // the RIFF header, once the size is known
            for chunk in file.chunks {
                segments.append(chunk.isPresetData ? .memory(presetData) : .file(offset: chunk.offset, length: chunk.length))
            }
            let size = 12 + segments.reduce(0) { $0 + $1.length }
            var header = Array("RIFF".utf8)
            appendDoubleWord(&header, size - 8)
            header += Array("sfbk".utf8)
            segments[0] = .memory(header)
            var starts: [Int] = [], at = 0
            for segment in segments { starts.append(at); at += segment.length }
            self.segments = segments
            self.starts = starts
            self.size = size
        }

        func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Bool {
            guard count >= 0, offset >= 0, count <= size - offset else { return false }
            var done = 0
            var s = 0
            while done < count {
                let position = offset + done
                while s + 1 < segments.count && starts[s + 1] <= position { s += 1 }
                let within = position - starts[s]
                let n = min(count - done, segments[s].length - within)
                switch segments[s] {
                case .memory(let bytes):
                    bytes.withUnsafeBytes { (buffer + done).copyMemory(from: $0.baseAddress! + within, byteCount: n) }
                case .file(let fileOffset, _):
                    guard file.read(into: buffer + done, count: n, at: fileOffset + within) else { return false }
                }
                done += n
            }
            return true
        }
    }
}

/// The FluidSynth SoundFont loader every `Synth` has first: FluidSynth's own
/// SF2 loader over file callbacks that open `VirtualSoundFont`s by name. A
/// name that is no view's is not opened, and FluidSynth goes on to its
/// default loader (which opens real files).
enum VirtualSoundFontLoader {
    /// A new loader for a synth created with `settings` (the synth owns it once added).
    static func make(_ settings: Settings) throws(FluidSynthError) -> OpaquePointer {
        let loader = try check(new_fluid_defsfloader(settings.handle), "new_fluid_defsfloader")
        do throws(FluidSynthError) {
            try check(fluid_sfloader_set_callbacks(loader, open, read, seek, tell, close), "fluid_sfloader_set_callbacks")
        } catch {
            delete_fluid_sfloader(loader)
            throw error
        }
        return loader
    }

    /// An open view and the position FluidSynth reads at (one thread at a time, as a FILE).
    final class Handle {
        let content: VirtualSoundFont.Content
        var position = 0
        init(_ content: VirtualSoundFont.Content) { self.content = content }
    }

    private static func handle(_ pointer: UnsafeMutableRawPointer?) -> Handle? {
        pointer.map { Unmanaged<Handle>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let open: fluid_sfloader_callback_open_t = { name in
        guard let name else { return nil }
        let key = String(cString: name)
        // A file cut short since it was read: refused, so a load from it fails as FluidSynth's own open would.
        guard let content = VirtualSoundFont.registry.withLock({ $0[key] }), content.file.keepsItsSize else { return nil }
        return Unmanaged.passRetained(Handle(content)).toOpaque()
    }

    private static let read: fluid_sfloader_callback_read_t = { buffer, count, pointer in
        guard let buffer, let file = handle(pointer), count >= 0,
              file.content.read(into: buffer, count: Int(count), at: file.position) else { return FLUID_FAILED }
        file.position += Int(count)
        return FLUID_OK
    }

    private static let seek: fluid_sfloader_callback_seek_t = { pointer, offset, origin in
        guard let file = handle(pointer) else { return FLUID_FAILED }
        let base: Int
        switch origin {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = file.position
        case SEEK_END: base = file.content.size
        default: return FLUID_FAILED
        }
        let position = base + Int(offset)
        guard position >= 0 else { return FLUID_FAILED }
        file.position = position
        return FLUID_OK
    }

    private static let tell: fluid_sfloader_callback_tell_t = { pointer in
        guard let file = handle(pointer) else { return fluid_long_long_t(FLUID_FAILED) }
        return fluid_long_long_t(file.position)
    }

    private static let close: fluid_sfloader_callback_close_t = { pointer in
        guard let pointer else { return FLUID_FAILED }
        Unmanaged<Handle>.fromOpaque(pointer).release()
        return FLUID_OK
    }
}
