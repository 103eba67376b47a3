import ArgumentParser
import Foundation
import Pasteboard

/// `pbctl types`: one type per line.
struct Types: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the pasteboard's types, one per line, richest first.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                for type in try await proxy.types(global.pasteboard).types {
                    Output.line(type)
                }
            }
        }
    }
}

/// `pbctl info`: the change count and every item's types and sizes.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the change count and each item's types and sizes.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print one JSON object: {\"name\", \"count\", \"items\": [{\"types\", \"sizes\"}]}.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                let (count, items) = try await proxy.items(global.pasteboard)
                if json {
                    let encoded = items.map { "{\"types\":\(Output.json($0.types)),\"sizes\":[\($0.sizes.map(String.init).joined(separator: ","))]}" }
                    Output.line("{\"name\":\(Output.json(global.pasteboard)),\"count\":\(count),\"items\":[\(encoded.joined(separator: ","))]}")
                    return
                }
                Output.line("pasteboard: \(global.pasteboard)")
                Output.line("count: \(count)")
                Output.line("items: \(items.count)")
                for (index, item) in items.enumerated() {
                    Output.line("item \(index):")
                    for (type, size) in zip(item.types, item.sizes) {
                        Output.line("  \(type)\t\(size < 0 ? "promised" : size == 1 ? "1 byte" : "\(size) bytes")")
                    }
                }
            }
        }
    }
}

/// `pbctl count`: the change count.
struct Count: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the pasteboard's change count.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                Output.line(String(try await proxy.changeCount(global.pasteboard)))
            }
        }
    }
}

/// `pbctl list`: the pasteboard names.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the pasteboards, one name per line.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingFailures {
            try await Session.run(global) { proxy in
                for name in try await proxy.listPasteboards() {
                    Output.line(name)
                }
            }
        }
    }
}
