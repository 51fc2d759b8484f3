// swift-tools-version: 6.1
// Fixture for scripts/check-imports --self-test: every import is declared. Not built.
import PackageDescription

let package = Package(
    name: "FixtureDeclared",
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
    ],
    targets: [
        .systemLibrary(name: "CFoo"),
        .target(name: "Base", dependencies: ["CFoo"]),
        .target(name: "Mid", dependencies: [.target(name: "Base")]),
        .executableTarget(name: "fixture-app", dependencies: [
            "Mid", "Base", .product(name: "Atomics", package: "swift-atomics"),
        ], path: "Tools/App"),
        .testTarget(name: "MidTests", dependencies: ["Mid"]),
    ]
)
