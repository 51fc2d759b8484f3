// swift-tools-version: 6.1
// Fixture for scripts/check-imports --self-test: a Foundation-free target imports Foundation after a
// string literal, and a raw string, an interpolation and a comment hold text that looks like imports
// (see expected-errors.txt). Not built.
import PackageDescription

let package = Package(
    name: "FixtureStringLiteral",
    targets: [
        .target(name: "Engine"),
        .target(name: "Wiring", dependencies: ["Engine"]),
    ]
)
