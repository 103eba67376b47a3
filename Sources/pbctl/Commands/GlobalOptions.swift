import ArgumentParser

/// The options every command takes, before or after the command's name.
struct GlobalOptions: ParsableArguments {
    @Option(name: [.customShort("p"), .long], help: ArgumentHelp("The pasteboard to use.", valueName: "NAME"))
    var pasteboard: String = "general"

    @Option(name: .long, help: ArgumentHelp("The bus pasteboardd is on (default: the session bus).", valueName: "BUS"))
    var address: String?

    var target: Target {
        Target(pasteboard: pasteboard, address: address)
    }
}
