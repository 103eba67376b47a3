import PasteboardInterface

/// `pbctl types`: one type per line.
struct TypesJob: Job {
    var target: Target

    func run() async throws {
        try await Session.run(target) { server in
            for type in try await server.types(target.pasteboard).types {
                Output.line(type)
            }
        }
    }
}

/// `pbctl info`: the change count and every item's types and sizes.
struct InfoJob: Job {
    var target: Target
    var json: Bool

    func run() async throws {
        try await Session.run(target) { server in
            let name = target.pasteboard
            let (count, items) = try await server.items(name)
            let desktop = await server.desktop(of: name)
            if json {
                // `concealed` and `owner-only` as `Items` gives them: present when true.
                let encoded = items.map { item in
                    "{\"types\":\(Output.json(item.types)),\"sizes\":[\(item.sizes.map(String.init).joined(separator: ","))]"
                        + (item.isConcealed ? ",\"concealed\":true" : "") + (item.isOwnerOnly ? ",\"owner-only\":true" : "") + "}"
                }
                let bridged = desktop.map { ",\"desktop\":\(Output.json($0))" } ?? ""
                Output.line("{\"name\":\(Output.json(name)),\"count\":\(count),\"items\":[\(encoded.joined(separator: ","))]\(bridged)}")
                return
            }
            Output.line("pasteboard: \(name)")
            if let desktop { Output.line("desktop: \(desktop)") }
            Output.line("count: \(count)")
            Output.line("items: \(items.count)")
            for (index, item) in items.enumerated() {
                // Marked as in `--json`, so that a person sees what a script would leave alone.
                let marks = (item.isConcealed ? ["concealed"] : []) + (item.isOwnerOnly ? ["owner-only"] : [])
                Output.line("item \(index)\(marks.isEmpty ? "" : " (" + marks.joined(separator: ", ") + ")"):")
                for (type, size) in zip(item.types, item.sizes) {
                    Output.line("  \(type)\t\(size < 0 ? "promised" : size == 1 ? "1 byte" : "\(size) bytes")")
                }
            }
        }
    }
}

/// `pbctl count`: the change count.
struct CountJob: Job {
    var target: Target

    func run() async throws {
        try await Session.run(target) { server in
            Output.line(String(try await server.changeCount(target.pasteboard)))
        }
    }
}

/// `pbctl list`: the pasteboard names.
struct ListJob: Job {
    var target: Target

    func run() async throws {
        try await Session.run(target) { server in
            for name in try await server.listPasteboards() {
                Output.line(name)
            }
        }
    }
}
