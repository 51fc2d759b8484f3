// swift-tools-version: 6.1
// Fixture for scripts/check-imports --self-test: some imports are not declared (see expected-errors.txt). Not built.
import PackageDescription

let package = Package(
    name: "FixtureUndeclared",
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
        .package(url: "https://example.invalid/unlisted", from: "1.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CFoo"),
        .target(name: "Base", dependencies: ["CFoo"]),
        .target(name: "Mid", dependencies: [.target(name: "Base")]),
        .executableTarget(name: "fixture-app", dependencies: [
            "Mid", .product(name: "Atomics", package: "swift-atomics"),
        ], path: "Tools/App"),
        .testTarget(name: "MidTests", dependencies: ["Mid", .product(name: "Unlisted", package: "unlisted")]),
    ]
)
