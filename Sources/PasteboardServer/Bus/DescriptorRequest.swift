import DBus
import PasteboardModel

/// A `WriteItemsFd` call checked through before anything is read or counted: its name, its
/// options, and each type with the descriptor it names.
///
/// Everything the call alone can get wrong is refused here, on the bus thread and before the
/// transfer takes one of `max-transfers` slots: a malformed call is answered with what is wrong
/// with it (`InvalidName`, `InvalidType`, `InvalidArgument`) however busy the server is, and
/// reading one descriptor, which may wait up to the idle timeout, is never spent on a call
/// that is wrong further on.
struct DescriptorRequest: Sendable {
    let name: PasteboardName
    let options: WriteOptions
    /// Each item's types in order, each with the descriptor to read it from.
    let items: [[(type: PasteboardType, fd: UnixFileDescriptor)]]

    init(_ arguments: [DBusValue]) throws(PasteboardError) {
        name = try Arguments.name(arguments[0])
        options = try Arguments.writeOptions(arguments[2])
        var items: [[(type: PasteboardType, fd: UnixFileDescriptor)]] = []
        for (index, element) in (arguments[1].arrayValue ?? []).enumerated() {
            var representations: [(type: PasteboardType, fd: UnixFileDescriptor)] = []
            for (key, descriptor) in element.dictionaryEntries ?? [] {
                let type = try Arguments.type(key)
                guard let fd = descriptor.fileDescriptorValue else { throw .invalidArgument("item \(index) has no descriptor for \(type)") }
                // An `h` is an index into the descriptors sent with the message; one past them
                // reads as -1, which `poll` would ignore until the idle timeout.
                guard fd.rawValue >= 0 else {
                    throw .invalidArgument("item \(index) names a descriptor for \(type) that the call did not carry")
                }
                representations.append((type, fd))
            }
            items.append(representations)
        }
        self.items = items
    }
}
