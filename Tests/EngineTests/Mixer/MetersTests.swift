import Testing
@testable import Engine

/// Strip indexes out of range and NaN or infinite levels given to the meters:
/// refused (and counted) or clamped, never a trap or a read outside the strips.
@Suite struct MetersTests {
    static let outside = [-1, 2, 3, Int.max, Int.min, Int.max - 1]

    @Test func stripPeak_outOfRange_readsZero() {
        let meters = Meters(stripCount: 2)
        meters.setStripPeak(0, 0.5); meters.setStripPeak(1, 0.25)
        for strip in Self.outside { #expect(meters.stripPeak(strip) == 0, "strip \(strip)") }
        #expect(meters.stripPeak(0) == 0.5 && meters.stripPeak(1) == 0.25)
    }

    @Test func setStripPeak_outOfRange_isRefusedAndCounted() {
        let meters = Meters(stripCount: 2)
        meters.setStripPeak(0, 0.5); meters.setStripPeak(1, 0.25)
        for strip in Self.outside { meters.setStripPeak(strip, 1) }
        #expect(meters.refusedUpdates == Self.outside.count)
        #expect(meters.stripPeak(0) == 0.5 && meters.stripPeak(1) == 0.25)
    }

    @Test func setStripPeak_badLevels_refuseNaN_clampTheRest() {
        let meters = Meters(stripCount: 1)
        meters.setStripPeak(0, 0.5)
        meters.setStripPeak(0, .nan)
        #expect(meters.stripPeak(0) == 0.5)
        #expect(meters.refusedUpdates == 1)
        meters.setStripPeak(0, .infinity)
        #expect(meters.stripPeak(0) == .greatestFiniteMagnitude)
        meters.setStripPeak(0, -.infinity)
        #expect(meters.stripPeak(0) == 0)
        meters.setStripPeak(0, -0.3)
        #expect(meters.stripPeak(0) == 0)
        #expect(meters.refusedUpdates == 1)
    }

    @Test func publish_badLevels_refuseNaN_clampTheRest_ignoreNegativeClips() {
        let meters = Meters(stripCount: 0)
        meters.publish(peak: 0.5, rms: 0.25, clips: 3)
        meters.publish(peak: .nan, rms: 0.125, clips: -5)
        #expect(meters.peak == 0.5 && meters.rms == 0.125)
        #expect(meters.clippedSamples == 3)
        meters.publish(peak: 0.75, rms: .nan, clips: Int.min)
        #expect(meters.peak == 0.75 && meters.rms == 0.125)
        #expect(meters.refusedUpdates == 2)
        meters.publish(peak: .infinity, rms: -.infinity, clips: 0)
        #expect(meters.peak == .greatestFiniteMagnitude && meters.rms == 0)
        #expect(meters.peak.isFinite && meters.clippedSamples == 3)
    }

    @Test func negativeStripCount_meansNoStrips() {
        let meters = Meters(stripCount: -3)
        #expect(meters.stripCount == 0)
        meters.setStripPeak(0, 1)
        #expect(meters.stripPeak(0) == 0)
        #expect(meters.refusedUpdates == 1)
    }
}
