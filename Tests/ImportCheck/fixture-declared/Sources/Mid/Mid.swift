public import Base
internal import Synchronization

public func mid() -> Int { base() + 1 }
