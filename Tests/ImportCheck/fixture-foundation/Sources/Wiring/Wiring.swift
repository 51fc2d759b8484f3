import Engine
import Foundation

public let wiring = engine
