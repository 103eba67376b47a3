// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "pasteboardd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pasteboardd", targets: ["pasteboardd"]),
        .executable(name: "pbctl", targets: ["pbctl"]),
        .executable(name: "pasteboard-bench", targets: ["pasteboard-bench"]),
        .library(name: "Pasteboard", targets: ["Pasteboard"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // MARK: The C library, seen from Swift

        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),

        // MARK: D-Bus binding (knows nothing of pasteboards)

        .target(
            name: "DBus",
            dependencies: ["CDBus"]
        ),

        // MARK: Pasteboard vocabulary (knows nothing of D-Bus)

        .target(name: "PasteboardModel"),

        // MARK: The server: model + store + bus interface

        .target(
            name: "PasteboardServer",
            dependencies: [
                "DBus",
                "PasteboardModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.embedInCode("org.pasteboardd.Pasteboard1.xml")]
        ),

        // MARK: Client bindings

        // The interface's names, options, item descriptions and errors, without Foundation:
        // shared by the library and the static pbctl.
        .target(
            name: "PasteboardInterface",
            dependencies: ["DBus", "PasteboardModel"]
        ),
        .target(
            name: "Pasteboard",
            dependencies: ["DBus", "PasteboardModel", "PasteboardInterface"]
        ),

        // MARK: Executables (argument parsing and little else)

        .executableTarget(
            name: "pasteboardd",
            dependencies: [
                "PasteboardServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "pbctl",
            dependencies: [
                "DBus",
                "PasteboardModel",
                "PasteboardInterface",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [
                // One static executable: no shared library to find, map and relocate at each
                // start (libdbus alone brought libsystemd and six more), which was most of what
                // a `pbctl copy` cost. Foundation is not linked: pbctl talks to the bus through
                // DBus, not the Foundation-based Pasteboard library. FoundationEssentials is (for
                // ArgumentParser and PasteboardModel), and its static archive needs the two
                // libraries and Synchronization named here, which only its shared build lists.
                // Static glibc notes at link time that getpwnam and getaddrinfo load NSS modules
                // when called (libdbus's cookie authentication, tcp: buses); --no-warnings keeps
                // the bfd linker from printing those notes on every build.
                .unsafeFlags([
                    "-static-executable", "-use-ld=bfd", "-Xlinker", "--no-warnings",
                    "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization",
                ]),
                // Without symbols and debug information the release binary is 16 MB instead of
                // 27 (crash backtraces then show addresses; debug builds keep everything).
                .unsafeFlags(["-Xlinker", "--strip-all"], .when(configuration: .release)),
            ]
        ),

        // MARK: Starting helper processes (tests and benchmark)

        .target(name: "ProcessSpawning"),

        // MARK: Benchmarks (against the D-Bus floor, measured in the same run)

        .executableTarget(
            name: "pasteboard-bench",
            dependencies: [
                "DBus",
                "ProcessSpawning",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Tests

        .target(
            name: "TestSupport",
            dependencies: ["DBus", "ProcessSpawning"],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "PasteboardModelTests", dependencies: ["PasteboardModel"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "PasteboardTests", dependencies: ["Pasteboard", "TestSupport"]),
        .testTarget(
            name: "PasteboardServerTests",
            dependencies: ["PasteboardServer", "Pasteboard", "DBus", "TestSupport"]
        ),
        .testTarget(
            name: "PbctlTests",
            dependencies: ["DBus", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
