import ArgumentParser
import Foundation

/// `pasteboard-bench`: pasteboardd against the D-Bus floor, in one run.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pasteboard-bench",
        abstract: "Measure pasteboardd against a minimal echo service on the same private bus.",
        discussion: """
            Starts a private dbus-daemon, the release-built pasteboardd next to this binary and an \
            echo service in a process of its own (this binary, as the floor), then prints each \
            figure with its ratio to the floor measured in the same run, and writes the same \
            figures as JSON.
            """)

    @Flag(help: "A run under a minute: fewer repetitions, no 1 GiB transfer.")
    var quick = false

    @Option(help: "Where to write the figures as JSON (default: bench.json for a full run; a --quick run writes none unless told).")
    var json: String?

    @Option(help: "The dbus-daemon configuration (default: dbus/session-test.conf of the repository).")
    var busConfig: String?

    @Option(help: "Repetitions of the round-trip and signal figures (default: 1000 with --quick, else 3000).")
    var repetitions: Int?

    @Option(help: ArgumentHelp(
        "Measure only these figures (comma-separated: \(Figures.allCases.map(\.rawValue).joined(separator: ", "))).",
        valueName: "figures"))
    var only: String?

    /// The groups of figures, in the order they are measured.
    enum Figures: String, CaseIterable {
        case roundTrip = "round-trip", signal, clients, transfer, pbctl, desktop, shared, small, coldStart = "cold-start"
    }

    @Option(help: .hidden)
    var role: String?

    @Option(help: .hidden)
    var address: String?

    mutating func validate() throws {
        if let role {
            guard HelperRole(rawValue: role) != nil, address != nil else { throw ValidationError("--role takes echo or listen, with --address") }
        }
        for name in only?.split(separator: ",") ?? [] where Figures(rawValue: String(name)) == nil {
            throw ValidationError("unknown figure '\(name)' in --only; choose from \(Figures.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    mutating func run() async throws {
        if let role = role.flatMap(HelperRole.init(rawValue:)), let address {
            try await role.run(address: address)
        }
        let wanted = Set(only.map { $0.split(separator: ",").compactMap { Figures(rawValue: String($0)) } } ?? Figures.allCases)
        var counts = quick ? Repetitions.quick : Repetitions.full
        if let repetitions {
            counts.roundTrips = repetitions
            counts.signals = repetitions
        }
        let fixture = try await BusFixture(busConfig: busConfig)
        var figures: [Figure] = []
        do {
            let measure = Measurements(fixture: fixture, repetitions: counts)
            if wanted.contains(.roundTrip) { figures += try await measure.roundTrip() }
            if wanted.contains(.signal) { figures += try await measure.signalLatency() }
            if wanted.contains(.clients) { figures += try await measure.concurrentClients() }
            if wanted.contains(.transfer) {
                for source in [Measurements.LargeSource.memfd, .pipe] {
                    figures += try await measure.largeTransfer(size: 64 << 20, times: counts.transfers, through: source)
                    if counts.largeTransfers > 0 {
                        figures += try await measure.largeTransfer(size: 1 << 30, times: counts.largeTransfers, through: source)
                    }
                }
            }
            // What the transfers left the kernel to write back is not `pbctl`'s to wait for.
            fixture.settle()
            if wanted.contains(.pbctl) { figures.append(try await measure.pbctlProcesses()) }
            if wanted.contains(.desktop) {
                let desktop = DesktopFigures(
                    products: fixture.products, directory: fixture.directory, busConfig: fixture.busConfig, repetitions: counts.processStarts,
                    mainAddress: fixture.address)
                figures += try await desktop.measure()
            }
            if wanted.contains(.shared) {
                figures += try await SharedFigures(fixture: fixture, repetitions: counts.signals).measure()
            }
            // The cold start restarts the server on the pasteboards written for the memory figure.
            if wanted.contains(.small) || wanted.contains(.coldStart) { figures.append(try await measure.smallPasteboards()) }
            if wanted.contains(.coldStart) { figures.append(try await measure.coldStart()) }
        } catch {
            fixture.stop()
            throw error
        }
        fixture.stop()
        let report = Report(quick: quick, figures: figures)
        print(report.table, terminator: "")
        // The repository's bench.json holds a full run's figures: a quick run does not replace them.
        guard let path = json ?? (quick ? nil : "bench.json") else { return }
        try report.writeJSON(to: path)
        print("figures written to \(path)")
    }
}
