import Glibc

/// The monotonic clock in nanoseconds (CLOCK_MONOTONIC: never set back, counts
/// no suspend): the clock every arrival time in Carillon is on.
public func monotonicNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
}
