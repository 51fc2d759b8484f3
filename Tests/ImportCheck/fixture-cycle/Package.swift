// swift-tools-version: 6.1
// Fixture for scripts/check-imports --self-test: two targets depend on each other (see expected-errors.txt). Not built.
import PackageDescription

let package = Package(
    name: "FixtureCycle",
    targets: [
        .target(name: "Low", dependencies: ["High"]),
        .target(name: "High", dependencies: ["Low"]),
    ]
)
