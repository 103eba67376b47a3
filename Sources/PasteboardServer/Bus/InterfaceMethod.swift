/// The methods of `org.pasteboardd.Pasteboard1`, with the signatures the contract fixes.
///
/// A test checks this table against `dbus/org.pasteboardd.Pasteboard1.xml`, the interface's
/// source of truth.
enum InterfaceMethod: String, CaseIterable {
    case listPasteboards = "ListPasteboards"
    case changeCount = "ChangeCount"
    case clearContents = "ClearContents"
    case writeItems = "WriteItems"
    case writeItemsFd = "WriteItemsFd"
    case types = "Types"
    case items = "Items"
    case availableType = "AvailableType"
    case canRead = "CanRead"
    case readData = "ReadData"
    case readBest = "ReadBest"
    case readFd = "ReadFd"
    case writePromised = "WritePromised"
    case createUnique = "CreateUnique"
    case remove = "Remove"
    case history = "History"
    case restore = "Restore"

    /// The method called `member`, found by a hash lookup rather than by comparing the name
    /// with each method's in turn, as `init(rawValue:)` does.
    init?(member: String) {
        guard let method = Self.byMember[member] else { return nil }
        self = method
    }

    private static let byMember = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// Whether the method changes nothing, so that it may be answered from the committed state
    /// without waiting its turn on the service queue when that queue is empty.
    var onlyReads: Bool {
        switch self {
        case .listPasteboards, .changeCount, .types, .items, .availableType, .canRead, .readData, .readBest, .readFd, .history: true
        case .clearContents, .writeItems, .writeItemsFd, .writePromised, .createUnique, .remove, .restore: false
        }
    }

    /// The input signature, checked before anything else.
    var inSignature: String {
        switch self {
        case .listPasteboards, .createUnique: ""
        case .changeCount, .clearContents, .types, .items, .remove: "s"
        case .writeItems: "saa{say}a{sv}"
        case .writeItemsFd: "saa{sh}a{sv}"
        case .availableType, .canRead: "sas"
        case .readData, .readFd: "sust"
        case .readBest: "suast"
        case .writePromised: "saasa{sv}"
        case .history: "su"
        case .restore: "st"
        }
    }

    var outSignature: String {
        switch self {
        case .listPasteboards: "as"
        case .changeCount, .clearContents, .writeItems, .writeItemsFd, .writePromised, .restore: "t"
        case .types: "tas"
        case .items: "taa{sv}"
        case .availableType, .createUnique: "s"
        case .canRead: "b"
        case .readData: "tay"
        case .readBest: "tsay"
        case .readFd: "th"
        case .remove: ""
        case .history: "a(txas)"
        }
    }

    /// How the contract writes the arguments, for error messages.
    var inArguments: String {
        switch self {
        case .listPasteboards, .createUnique: "no arguments"
        case .changeCount, .clearContents, .types, .items, .remove: "(s name)"
        case .writeItems: "(s name, aa{say} items, a{sv} options)"
        case .writeItemsFd: "(s name, aa{sh} items, a{sv} options)"
        case .availableType, .canRead: "(s name, as types)"
        case .readData, .readFd: "(s name, u item, s type, t expect)"
        case .readBest: "(s name, u item, as types, t expect)"
        case .writePromised: "(s name, aas itemTypes, a{sv} options)"
        case .history: "(s name, u limit)"
        case .restore: "(s name, t count)"
        }
    }
}
