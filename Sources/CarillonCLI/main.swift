// `carillon`: the commands live in CarillonCommands; this target is how the binary is linked (Package.swift).
import CarillonCommands
import Foundation  // with -static-stdlib in release: Foundation's libraries are linked in statically

CarillonCommand.main()
