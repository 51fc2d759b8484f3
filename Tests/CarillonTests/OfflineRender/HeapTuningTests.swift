import Glibc
import Testing
@testable import Threads

/// glibc's heap as a render sets it (`HeapTuning`). The settings are read, not
/// applied: `mallopt` changes the whole test process's heap, which every test
/// running beside these shares (one arena for all of them, and a threshold a
/// parallel test's free chunks make unobservable). Their effect on a render is
/// measured in Benchmarks/README.md ("One synth's peak memory: the heap").
@Suite struct HeapTuningTests {
    @Test func fixedThresholds_andAnArenaPerRenderingThread() {
        let settings = HeapTuning.settings(workers: 4).map { "\($0.name)=\($0.value)" }
        #expect(settings == ["M_MMAP_THRESHOLD=131072", "M_TRIM_THRESHOLD=131072", "M_ARENA_MAX=4"])
        // No worker count below one arena (M_ARENA_MAX 0 would mean glibc's default, one per thread).
        #expect(HeapTuning.settings(workers: 0).last?.value == 1)
    }

    /// Freed small blocks below one still held are pages the heap keeps; `returnFreePages` gives them back
    /// (`malloc_trim` changes no setting: safe beside the other tests).
    @Test func freedPagesReturn() throws {
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<4_000 {
            let b = try #require(malloc(1_000))
            memset(b, 1, 1_000)
            blocks.append(b)
        }
        let kept = try #require(malloc(1_000))
        defer { free(kept) }
        for b in blocks { free(b) }
        #expect(HeapTuning.returnFreePages())
    }

    @Test func refusedSettingIsNamed() {
        let error = HeapTuningError(setting: "M_ARENA_MAX", value: -1)
        #expect("\(error)" == "glibc refused mallopt(M_ARENA_MAX, -1); the heap keeps its defaults")
    }
}
