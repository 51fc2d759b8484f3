// swift-tools-version: 6.1
// Fixture for scripts/check-imports --self-test: two folders of Panel use each other's types, two of
// Ledger use each other through a type and an extension's member; Tidy's
// folders use each other one way only (see expected-errors.txt). Not built.
import PackageDescription

let package = Package(
    name: "FixtureFolderCycle",
    targets: [
        .target(name: "Panel"),
        .target(name: "Tidy"),
        .target(name: "Ledger"),
    ]
)
