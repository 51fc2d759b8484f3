import Foundation

public let engine = 1
