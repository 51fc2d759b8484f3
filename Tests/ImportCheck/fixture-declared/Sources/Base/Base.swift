@_implementationOnly import CFoo
#if canImport(Glibc)
import Glibc
#endif
import Foundation

public func base() -> Int { 1 }
