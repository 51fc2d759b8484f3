import Testing
@testable import Mid

@Test func mid_isTwo() { #expect(mid() == 2) }
