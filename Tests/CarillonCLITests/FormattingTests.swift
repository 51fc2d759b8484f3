import Foundation
import Testing
@testable import CarillonCommands

/// The one formatter per kind every command prints with (Support/Formatting.swift).
@Suite struct FormattingTests {
    @Test func decimals_roundAsPrintfDoes() {
        #expect(formatted(1.25, 1) == String(format: "%.1f", 1.25))   // the binary 1.25 is exact: half to even
        #expect(formatted(2.675, 2) == String(format: "%.2f", 2.675))  // 2.67499999…: down, not up
        #expect(formatted(131.6455, 3) == String(format: "%.3f", 131.6455))
        #expect(formatted(-3.14159, 2) == "-3.14")
        #expect(formatted(12, 0) == "12")
        #expect(formatted(1e300, 1).count == 303)
        for _ in 0..<200 {
            let value = Double.random(in: -1e6...1e6), places = Int.random(in: 0...6)
            #expect(formatted(value, places) == String(format: "%.*f", Int32(places), value))
        }
    }

    @Test func decimals_neverMinusZero_andSayWhatIsNotANumber() {
        #expect(formatted(-0.04, 1) == "0.0")
        #expect(formatted(-0.0, 2) == "0.00")
        #expect(formatted(-0.06, 1) == "-0.1")
        #expect(formatted(.infinity, 1) == "inf")
        #expect(formatted(-.infinity, 1) == "-inf")
        #expect(formatted(.nan, 1) == "nan")
    }

    @Test func decimals_trimmed_keepOneDecimal() {
        #expect(formatted(1, 2, trimmed: true) == "1.0")
        #expect(formatted(0.75, 3, trimmed: true) == "0.75")
        #expect(formatted(0.18, 2, trimmed: true) == "0.18")
        #expect(formatted(10.5004, 3, trimmed: true) == "10.5")
        #expect(formatted(3, 0, trimmed: true) == "3")
    }

    @Test func clock_minutesSecondsAndTenths() {
        #expect(clock(0) == "0:00.0")
        #expect(clock(5.04) == "0:05.0")
        #expect(clock(5.06) == "0:05.1")
        #expect(clock(59.96) == "1:00.0")     // rounds to the nearest tenth, carrying into the minute
        #expect(clock(131.646) == "2:11.6")
        #expect(clock(300) == "5:00.0")
        #expect(clock(7200) == "120:00.0")    // minutes go past 59
        #expect(clock(-1.5) == "-0:01.5")
        #expect(clock(-0.01) == "0:00.0")
    }

    @Test func clock_inMilliseconds() {
        #expect(clock(131.646, decimals: 3) == "2:11.646")
        #expect(clock(0.0005, decimals: 3) == "0:00.001")
        #expect(clock(60, decimals: 0) == "1:00")
    }

    @Test func clock_neverTraps() {
        #expect(clock(.infinity) == "inf")
        #expect(clock(.nan) == "nan")
        #expect(clock(1e300).hasSuffix(" s"))
        #expect(clock(-1e300).hasPrefix("-"))
    }

    @Test func span_inWords() {
        #expect(span(8000) == "2 h 13 min 20 s")
        #expect(span(300) == "5 min 0 s")
        #expect(span(59.6) == "1 min 0 s")
        #expect(span(.infinity) == "inf s")
    }

    @Test func levels_speeds_andBars() {
        #expect(level(-3.24, "dBFS") == "-3.2 dBFS")
        #expect(level(-14, "LUFS") == "-14.0 LUFS")
        #expect(realTime(123.45) == "123.5× real time")
        #expect(progressBar(0.5, width: 10) == "[#####-----]")
        #expect(progressBar(2, width: 4) == "[####]")
        #expect(progressBar(.nan, width: 4) == "[----]")
    }
}
