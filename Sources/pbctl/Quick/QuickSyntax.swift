import ArgumentParser

/// One command as ``QuickLine`` reads it: its flags, its options and how many positional
/// arguments it takes, and how its job is made from them.
///
/// Each command declares this next to its ArgumentParser declaration (see `Commands/`), with
/// the same spellings, and makes the same job from the values, converted by the same
/// `ExpressibleByArgument` initializers.
///
/// Arrays, not dictionaries or sets: the first `Set<String>` of a process costs the Swift
/// runtime a scan of every protocol conformance in the program, more than reading a whole
/// command line this way.
struct QuickSyntax: Sendable {
    /// The command's name, as typed.
    let name: String
    /// Each spelling (`--json`) and the flag's name.
    let flags: [(spelling: String, name: String)]
    /// Each spelling (`-t`, `--type`) and the option's name.
    let options: [(spelling: String, name: String)]
    /// Option names that may be given more than once (array options).
    let repeatable: [String]
    /// At most this many positional arguments.
    let positionals: Int
    /// Makes the job; throws when a value does not convert or is not valid, and then
    /// ArgumentParser reads the line and says what is wrong.
    let job: @Sendable (QuickLine) throws -> any Job

    init(
        _ name: String, flags: [(spelling: String, name: String)] = [], options: [(spelling: String, name: String)] = [],
        repeatable: [String] = [], positionals: Int = 0, job: @escaping @Sendable (QuickLine) throws -> any Job
    ) {
        self.name = name
        self.flags = flags
        self.options = options
        self.repeatable = repeatable
        self.positionals = positionals
        self.job = job
    }
}

/// A value ``QuickLine`` leaves to ArgumentParser to complain about.
struct Unreadable: Error {}

extension QuickLine {
    /// The option's value converted as ArgumentParser converts it; nil when it is absent.
    func value<Value: ExpressibleByArgument>(_ name: String, as type: Value.Type = Value.self) throws(Unreadable) -> Value? {
        guard let text = values(name).last else { return nil }
        guard let value = Value(argument: text) else { throw Unreadable() }
        return value
    }

    /// Every value of an option, in order.
    func values(_ name: String) -> [String] {
        options.filter { $0.name == name }.map(\.value)
    }

    /// Whether the flag was given.
    func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// The positional argument at `index` converted as ArgumentParser converts it; nil when
    /// there are fewer.
    func positional<Value: ExpressibleByArgument>(_ index: Int, as type: Value.Type = Value.self) throws(Unreadable) -> Value? {
        guard index < positionals.count else { return nil }
        guard let value = Value(argument: positionals[index]) else { throw Unreadable() }
        return value
    }
}
