/// Declarations as freedesktop shared-mime-info packages: the XML files of `mime/packages/`
/// that `update-mime-database` compiles into the database every desktop program reads.
///
/// A package written here has one `<mime-type>` per declaration: its `comment`, each parent as
/// `sub-class-of`, each extension as a `glob`, and the identifier in an element of
/// ``TypeDeclaration/namespace``. The specification lets packages carry elements of other
/// namespaces, and `update-mime-database` copies them into the type's own file
/// (`mime/application/vnd.example.todo+json.xml`) without complaint; programs that do not
/// know the namespace see an ordinary MIME type.
///
/// ```xml
/// <mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info"
///            xmlns:pasteboard="https://pasteboardd.org/ns/uttype">
///   <mime-type type="application/vnd.example.todo+json">
///     <comment>Todo item</comment>
///     <sub-class-of type="application/json"/>
///     <glob pattern="*.todo"/>
///     <pasteboard:identifier>com.example.todo</pasteboard:identifier>
///   </mime-type>
/// </mime-info>
/// ```
extension TypeDeclaration {
    /// The namespace of shared-mime-info's own elements.
    public static let sharedMIMEInfoNamespace = "http://www.freedesktop.org/standards/shared-mime-info"

    /// The text of a package declaring `declarations`.
    public static func packageXML(_ declarations: [TypeDeclaration]) -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            "<!-- Type declarations for pasteboardd and every program that reads the MIME database. -->",
            #"<mime-info xmlns="\#(sharedMIMEInfoNamespace)" xmlns:pasteboard="\#(namespace)">"#,
        ]
        for declaration in declarations {
            lines.append(#"  <mime-type type="\#(XMLReader.escaped(declaration.mimeType.rawValue))">"#)
            lines.append("    <comment>\(XMLReader.escaped(declaration.comment))</comment>")
            for parent in declaration.parents {
                lines.append(#"    <sub-class-of type="\#(XMLReader.escaped(parent.rawValue))"/>"#)
            }
            for fileExtension in declaration.extensions {
                lines.append(#"    <glob pattern="*.\#(XMLReader.escaped(fileExtension))"/>"#)
            }
            lines.append("    <pasteboard:identifier>\(XMLReader.escaped(declaration.identifier))</pasteboard:identifier>")
            lines.append("  </mime-type>")
        }
        lines.append("</mime-info>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The declarations a package makes: its `<mime-type>` elements that carry an identifier.
    ///
    /// A type without one is some other program's and is skipped; one whose parts are invalid
    /// is reported in `problems` and skipped, so that one bad file never hides the others.
    ///
    /// - Parameters:
    ///   - text: The package's XML.
    ///   - file: Its path, recorded in each declaration and named in problems.
    /// Only types with a `/` are validated: an identifier would be looked up in the database
    /// being read.
    ///
    /// - Throws: ``XMLReader/Malformed`` when the text is not XML.
    public static func declarations(inPackage text: String, file: String, problems: inout [String]) throws(XMLReader.Malformed) -> [TypeDeclaration] {
        let root = try XMLReader.parse(text)
        guard root.name == "mime-info", root.namespace == sharedMIMEInfoNamespace else { return [] }
        var result: [TypeDeclaration] = []
        for element in root.children(named: "mime-type", in: sharedMIMEInfoNamespace) {
            guard let identifierElement = element.children(named: "identifier", in: namespace).first else { continue }
            let identifier = identifierElement.text.trimmingSpaces
            do throws(TypeDeclarationError) {
                try validate(identifier: identifier)
                guard let mimeText = element.attributes["type"], mimeText.isMIMESpelling, let mime = try? PasteboardType(validating: mimeText),
                    mime.isMIME, mime.parameters.isEmpty
                else {
                    throw .invalid("the type of \(identifier) is not a MIME type")
                }
                var parents: [PasteboardType] = []
                for parentElement in element.children(named: "sub-class-of", in: sharedMIMEInfoNamespace) {
                    guard let parentText = parentElement.attributes["type"], parentText.isMIMESpelling, let parent = try? PasteboardType(validating: parentText), parent.isMIME else {
                        throw .invalid("a sub-class-of of \(identifier) is not a MIME type")
                    }
                    parents.append(parent)
                }
                let comment = element.typeComment
                result.append(
                    TypeDeclaration(
                        trusted: identifier, mimeType: mime, parents: parents, extensions: element.typeExtensions,
                        comment: comment.isEmpty ? identifier : comment, file: file))
            } catch {
                problems.append("\(file): \(error.message); the declaration is ignored")
            }
        }
        return result
    }
}

extension XMLReader.Element {
    /// The comment of a `<mime-type>`: the one without a language, else the first; empty
    /// when there is none.
    var typeComment: String {
        let comments = children(named: "comment", in: TypeDeclaration.sharedMIMEInfoNamespace)
        return (comments.first { $0.attributes["xml:lang"] == nil } ?? comments.first)?.text.trimmingSpaces ?? ""
    }

    /// The extensions of a `<mime-type>`'s `*.EXT` globs.
    var typeExtensions: [String] {
        children(named: "glob", in: TypeDeclaration.sharedMIMEInfoNamespace).compactMap { glob in
            guard let pattern = glob.attributes["pattern"], pattern.hasPrefix("*."), pattern.count > 2 else { return nil }
            return String(pattern.dropFirst(2))
        }
    }
}
