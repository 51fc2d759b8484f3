// swift-tools-version: 6.1
// Fixture for scripts/check-imports --self-test: a target DESIGN.md keeps free of Foundation imports it (see expected-errors.txt). Not built.
import PackageDescription

let package = Package(
    name: "FixtureFoundation",
    targets: [
        .target(name: "Engine"),
        .target(name: "Wiring", dependencies: ["Engine"]),
    ]
)
