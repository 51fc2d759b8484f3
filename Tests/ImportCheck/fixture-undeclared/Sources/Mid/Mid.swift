public import Base
internal import CFoo
import struct Foundation.Date
@_implementationOnly import Yams

public func mid() -> Int { base() + 1 }
