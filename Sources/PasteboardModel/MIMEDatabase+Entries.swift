import Foundation

extension MIMEDatabase {
    /// The type's own file of the database (`mime/application/json.xml`), where the first data
    /// directory that has one keeps it: its description for people and its extensions.
    ///
    /// - Parameters:
    ///   - type: A canonical MIME type (aliases resolved); parameters are ignored.
    ///   - directories: XDG data directories, the most important first.
    public static func entry(of type: PasteboardType, in directories: [String]) -> (file: String, comment: String, extensions: [String])? {
        for directory in directories {
            let file = directory + "/mime/" + type.essence + ".xml"
            guard let data = FileManager.default.contents(atPath: file),
                let element = try? XMLReader.parse(String(decoding: data, as: UTF8.self))
            else { continue }
            return (file, element.typeComment, element.typeExtensions)
        }
        return nil
    }
}
