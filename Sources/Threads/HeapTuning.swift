import CMalloc

/// A `mallopt` setting glibc refused (it returns 0 for a value it does not take).
public struct HeapTuningError: Error, Equatable, CustomStringConvertible {
    /// The setting, as glibc names it (`M_ARENA_MAX`).
    public let setting: String
    public let value: Int32
    public init(setting: String, value: Int32) { self.setting = setting; self.value = value }
    public var description: String { "glibc refused mallopt(\(setting), \(value)); the heap keeps its defaults" }
}

/// glibc's heap settings for a process that renders offline, and its free
/// pages handed back. Both free memory that is not needed; neither changes
/// what is allocated or rendered (Benchmarks/README.md, "One synth's peak
/// memory: the heap").
public enum HeapTuning {
    /// Allocations this large or larger get pages of their own, returned at
    /// `free`. Fixed, because glibc's default moves: each freed mmapped chunk
    /// raises the threshold to its size (up to 32 MiB), so the synth's later
    /// buffers — and a font's samples — land in the heap, whose freed holes
    /// stay resident.
    static let mmapThreshold: Int32 = 128 * 1024
    /// Free memory at the heap's top beyond this is given back at once.
    static let trimThreshold: Int32 = 128 * 1024

    /// Before any thread starts: a fixed mmap and trim threshold, and at most
    /// `workers` malloc arenas (each worker thread otherwise gets an arena of
    /// its own beside the main thread's heap, which the main thread, waiting
    /// on the workers, hardly uses).
    public static func forRender(workers: Int) throws(HeapTuningError) {
        for setting in settings(workers: workers) where mallopt(setting.parameter, setting.value) != 1 {
            throw HeapTuningError(setting: setting.name, value: setting.value)
        }
    }

    /// One `mallopt` setting: glibc's parameter, its name, the value.
    struct Setting: Equatable {
        let parameter: Int32
        let name: String
        let value: Int32
    }

    /// What `forRender(workers:)` sets (apart, so a test can read it without
    /// changing its own process's heap, which every test in it shares).
    static func settings(workers: Int) -> [Setting] {
        [Setting(parameter: M_MMAP_THRESHOLD, name: "M_MMAP_THRESHOLD", value: mmapThreshold),
         Setting(parameter: M_TRIM_THRESHOLD, name: "M_TRIM_THRESHOLD", value: trimThreshold),
         Setting(parameter: M_ARENA_MAX, name: "M_ARENA_MAX", value: Int32(clamping: max(1, workers)))]
    }

    /// Hands the free pages of every arena back to the kernel (`malloc_trim`:
    /// the temporaries of a font's reading and a piece's plan, freed, stay
    /// resident otherwise). Not on an audio thread: it walks every arena
    /// under its lock. Returns whether any memory was given back.
    @discardableResult
    public static func returnFreePages() -> Bool { malloc_trim(0) == 1 }
}
