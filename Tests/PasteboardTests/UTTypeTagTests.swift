import Foundation
import Testing

@testable import Pasteboard

/// Apple's wider `UTType` surface: the common types beyond the contract's list, file name
/// extensions and MIME types as tags, and what a type says of itself.
@Suite("UTType tags and common types")
struct UTTypeTagTests {
    @Test(
        "Apple's common types have their identifiers and Linux MIME types, and read back from them",
        arguments: [
            (UTType.yaml, "public.yaml", "application/x-yaml"),
            (.utf8TabSeparatedText, "public.utf8-tab-separated-values-text", "text/tab-separated-values;charset=utf-8"),
            (.log, "public.log", "text/x-log"),
            (.cSource, "public.c-source", "text/x-csrc"),
            (.cPlusPlusHeader, "public.c-plus-plus-header", "text/x-c++hdr"),
            (.swiftSource, "public.swift-source", "text/x-swift"),
            (.javaScript, "com.netscape.javascript-source", "text/javascript"),
            (.shellScript, "public.shell-script", "application/x-shellscript"),
            (.pythonScript, "public.python-script", "text/x-python"),
            (.geoJSON, "public.geojson", "application/geo+json"),
            (.heif, "public.heif", "image/heif"),
            (.ico, "com.microsoft.ico", "image/vnd.microsoft.icon"),
            (.icns, "com.apple.icns", "image/x-icns"),
            (.gzip, "org.gnu.gnu-zip-archive", "application/gzip"),
            (.bz2, "public.bzip2-archive", "application/x-bzip2"),
            (.tarArchive, "public.tar-archive", "application/x-tar"),
            (.epub, "org.idpf.epub-container", "application/epub+zip"),
            (.vCard, "public.vcard", "text/vcard"),
            (.emailMessage, "public.email-message", "message/rfc822"),
            (.calendarEvent, "public.calendar-event", "text/calendar"),
            (.directory, "public.directory", "inode/directory"),
            (.symbolicLink, "public.symlink", "inode/symlink"),
            (.unixExecutable, "public.unix-executable", "application/x-executable"),
            (.mpeg, "public.mpeg", "video/mpeg"),
            (.avi, "public.avi", "video/x-msvideo"),
            (.wav, "com.microsoft.waveform-audio", "audio/wav"),
            (.aiff, "public.aiff-audio", "audio/x-aiff"),
            (.midi, "public.midi-audio", "audio/midi"),
            (.m3uPlaylist, "public.m3u-playlist", "audio/x-mpegurl"),
            (.pkcs12, "com.rsa.pkcs-12", "application/pkcs12"),
            (.x509Certificate, "public.x509-certificate", "application/pkix-cert"),
        ])
    func commonTypes(type: UTType, identifier: String, mimeType: String) {
        #expect(type.identifier == identifier)
        #expect(type.preferredMIMEType == mimeType)
        #expect(UTType(identifier) == type)
        #expect(UTType(mimeType: mimeType) == type)
        #expect(type.isDeclared)
    }

    @Test(
        "Apple's abstract types have no MIME type",
        arguments: [
            UTType.delimitedText, .sourceCode, .script, .propertyList, .threeDContent, .archive, .diskImage,
            .spreadsheet, .presentation, .database, .contact, .message, .toDoItem, .executable, .bookmark,
            .font, .video, .playlist,
        ])
    func abstractTypes(type: UTType) {
        #expect(type.preferredMIMEType == nil)
        #expect(type.pasteboardType == type.identifier)
    }

    @Test("the new types sit in Apple's hierarchy")
    func hierarchy() {
        #expect(UTType.cSource.conforms(to: .sourceCode))
        #expect(UTType.cSource.conforms(to: .plainText))
        #expect(UTType.shellScript.conforms(to: .script))
        #expect(UTType.shellScript.conforms(to: .text))
        #expect(UTType.commaSeparatedText.conforms(to: .delimitedText))
        #expect(UTType.commaSeparatedText.conforms(to: .text))
        #expect(UTType.zip.conforms(to: .archive))
        #expect(UTType.gzip.conforms(to: .archive))
        #expect(UTType.epub.conforms(to: .zip))
        #expect(UTType.vCard.conforms(to: .contact))
        #expect(UTType.emailMessage.conforms(to: .message))
        #expect(UTType(mimeType: "font/ttf")!.conforms(to: .font))
        #expect(UTType.video.conforms(to: .movie))
        #expect(UTType.folder.conforms(to: .directory))
        #expect(!UTType.directory.conforms(to: .data), "a directory is no stream of bytes")
        #expect(!UTType.cSource.conforms(to: .image))
        #expect(!UTType.archive.conforms(to: .zip))
    }

    @Test("a directory's MIME type reads back as .directory, not .folder")
    func sharedMIMEType() {
        #expect(UTType(mimeType: "inode/directory") == .directory)
    }

    // MARK: File name extensions

    @Test(
        "file name extensions give their types, through the MIME database",
        arguments: [
            ("png", UTType.png), ("PNG", .png), (".png", .png), ("html", .html), ("htm", .html), ("txt", .plainText),
            ("json", .json), ("c", .cSource), ("py", .pythonScript), ("sh", .shellScript), ("mp4", .mpeg4Movie),
            ("pdf", .pdf), ("gz", .gzip),
        ])
    func filenameExtensions(fileExtension: String, type: UTType) {
        #expect(UTType(filenameExtension: fileExtension) == type)
        #expect(UTType(tag: fileExtension, tagClass: .filenameExtension, conformingTo: nil) == type)
        #expect(UTType.types(tag: fileExtension, tagClass: .filenameExtension, conformingTo: nil).first == type)
    }

    @Test("a known extension that does not conform to the supertype gives nil")
    func extensionNotConforming() {
        #expect(UTType(filenameExtension: "png", conformingTo: .text) == nil)
        #expect(UTType(filenameExtension: "html", conformingTo: .text) == .html)
        #expect(UTType.types(tag: "png", tagClass: .filenameExtension, conformingTo: .text).isEmpty)
    }

    @Test("an unknown extension gives the same dynamic type each time, conforming to the supertype")
    func dynamicTypes() throws {
        let type = try #require(UTType(filenameExtension: "pbtestxyz"))
        #expect(type.isDynamic)
        #expect(!type.isDeclared)
        #expect(type.conforms(to: .data))
        #expect(type.preferredFilenameExtension == "pbtestxyz")
        #expect(UTType(filenameExtension: "PBTESTXYZ") == type)
        #expect(UTType.types(tag: "pbtestxyz", tagClass: .filenameExtension, conformingTo: nil).isEmpty)
        let text = try #require(UTType(filenameExtension: "pbtestnotes", conformingTo: .plainText))
        #expect(text.isDynamic)
        #expect(text.conforms(to: .text))
        #expect(!UTType.png.isDynamic)
    }

    @Test("tags that cannot name a type give nil")
    func invalidTags() {
        #expect(UTType(filenameExtension: "") == nil)
        #expect(UTType(filenameExtension: "a b") == nil)
        #expect(UTType(filenameExtension: "a/b") == nil)
        #expect(UTType(tag: "png", tagClass: UTTagClass(rawValue: "com.example.unknown-tag-class"), conformingTo: nil)?.isDynamic == true)
    }

    // MARK: MIME types with a supertype

    @Test("init(mimeType:conformingTo:) checks the supertype; .data asks nothing")
    func mimeTypeConformingTo() {
        #expect(UTType(mimeType: "text/html", conformingTo: .text) == .html)
        #expect(UTType(mimeType: "image/png", conformingTo: .text) == nil)
        #expect(UTType(mimeType: "image/png", conformingTo: .image) == .png)
        #expect(UTType(mimeType: "inode/directory") == .directory)
        #expect(UTType(tag: "text/csv", tagClass: .mimeType, conformingTo: .delimitedText) == .commaSeparatedText)
    }

    // MARK: What a type says of itself

    @Test("tags list the MIME type and the extensions, the customary one first")
    func tags() {
        let tags = UTType.html.tags
        #expect(tags[.mimeType] == ["text/html"])
        #expect(tags[.filenameExtension]?.first == "html")
        #expect(tags[.filenameExtension]?.contains("htm") == true)
        #expect(UTType.image.tags.isEmpty)
        #expect(UTType(mimeType: "application/x-yaml")!.preferredFilenameExtension == "yaml")
        #expect(UTType(mimeType: "text/x-diff")?.preferredFilenameExtension == "diff")
    }

    @Test("supertypes: every type it conforms to, itself left out")
    func supertypes() {
        let png = UTType.png.supertypes
        #expect(png.isSuperset(of: [.image, .content, .data, .item]))
        #expect(!png.contains(.png))
        #expect(!png.contains(.text))
        #expect(UTType.html.supertypes.isSuperset(of: [.plainText, .text]))
        #expect(UTType.item.supertypes.isEmpty)
        #expect(!UTType.directory.supertypes.contains(.data))
        for type in UTType.cSource.supertypes {
            #expect(UTType.cSource.conforms(to: type), "\(type)")
        }
    }

    @Test("descriptions come from the MIME database; public and dynamic are told apart")
    func descriptions() {
        #expect(UTType.png.localizedDescription == "PNG image")
        #expect(UTType.image.localizedDescription == nil)
        #expect(UTType.png.isPublic)
        #expect(!UTType.gif.isPublic)
        #expect(UTType.png.referenceURL == nil)
        #expect(UTType.png.version == nil)
    }
}
