import Testing
@testable import Mid
@testable import Base

@Test func mid_isTwo() { #expect(mid() == 2) }
