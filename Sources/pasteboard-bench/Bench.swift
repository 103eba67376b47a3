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
            echo service in this process, then prints each figure with its ratio to the floor \
            measured in the same run, and writes the same figures as JSON.
            """)

    @Flag(help: "A run under a minute: fewer repetitions, no 1 GiB transfer.")
    var quick = false

    @Option(help: "Where to write the figures as JSON.")
    var json = "bench.json"

    @Option(help: "The dbus-daemon configuration (default: dbus/session-test.conf of the repository).")
    var busConfig: String?

    @Option(help: "Repetitions of the round-trip and signal figures (default: 1000 with --quick, else 3000).")
    var repetitions: Int?

    mutating func run() async throws {
        var counts = quick ? Repetitions.quick : Repetitions.full
        if let repetitions {
            counts.roundTrips = repetitions
            counts.signals = repetitions
        }
        let fixture = try await BusFixture(busConfig: busConfig)
        var figures: [Figure] = []
        do {
            let measure = Measurements(fixture: fixture, repetitions: counts)
            figures.append(try await measure.roundTrip())
            figures.append(try await measure.signalLatency())
            figures += try await measure.concurrentClients()
            figures += try await measure.largeTransfer(size: 64 << 20, times: counts.transfers)
            if counts.largeTransfers > 0 {
                figures += try await measure.largeTransfer(size: 1 << 30, times: counts.largeTransfers)
            }
            figures.append(try await measure.pbctlProcesses())
            figures.append(try await measure.smallPasteboards())
            figures.append(try await measure.coldStart())
        } catch {
            fixture.stop()
            throw error
        }
        fixture.stop()
        let report = Report(quick: quick, figures: figures)
        print(report.table, terminator: "")
        try report.writeJSON(to: json)
        print("figures written to \(json)")
    }
}
