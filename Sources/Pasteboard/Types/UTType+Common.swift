import PasteboardModel

// MARK: - Common types

extension UTType {
    // Top of the hierarchy.

    /// `public.item`: every type conforms to it. Abstract; no MIME type.
    public static let item = BuiltInTypes.type("public.item")
    /// `public.content`: text, images, audio, video and documents. Abstract; no MIME type.
    public static let content = BuiltInTypes.type("public.content")
    /// `public.data` (`application/octet-stream`): any bytes; every type but `.item` and
    /// `.content` conforms to it, as every type conforms to `application/octet-stream` on the
    /// server.
    public static let data = BuiltInTypes.type("public.data")
    /// `public.composite-content`: documents such as PDF. Abstract; no MIME type.
    public static let compositeContent = BuiltInTypes.type("public.composite-content")

    // Text.

    /// `public.text` (`text/plain`): any text. The server maps the identifier to `text/plain`,
    /// which every `text/…` type and the text-based `application/…` types conform to.
    public static let text = BuiltInTypes.type("public.text")
    /// `public.plain-text` (`text/plain`): text in an unstated encoding (UTF-8 on Linux).
    public static let plainText = BuiltInTypes.type("public.plain-text")
    /// `public.utf8-plain-text` (`text/plain;charset=utf-8`).
    public static let utf8PlainText = BuiltInTypes.type("public.utf8-plain-text")
    /// `public.utf16-plain-text` (`text/plain;charset=utf-16`).
    public static let utf16PlainText = BuiltInTypes.type("public.utf16-plain-text")
    /// `public.html` (`text/html`).
    public static let html = BuiltInTypes.type("public.html")
    /// `public.rtf` (`text/rtf`).
    public static let rtf = BuiltInTypes.type("public.rtf")
    /// `public.json` (`application/json`).
    public static let json = BuiltInTypes.type("public.json")
    /// `public.xml` (`application/xml`).
    public static let xml = BuiltInTypes.type("public.xml")
    /// `public.comma-separated-values-text` (`text/csv`).
    public static let commaSeparatedText = BuiltInTypes.type("public.comma-separated-values-text")
    /// `public.tab-separated-values-text` (`text/tab-separated-values`).
    public static let tabSeparatedText = BuiltInTypes.type("public.tab-separated-values-text")
    /// `public.utf8-tab-separated-values-text` (`text/tab-separated-values;charset=utf-8`).
    public static let utf8TabSeparatedText = BuiltInTypes.type("public.utf8-tab-separated-values-text")
    /// `public.delimited-values-text`: text in rows of delimited values, such as CSV and TSV.
    /// Abstract; no MIME type.
    public static let delimitedText = BuiltInTypes.type("public.delimited-values-text")
    /// `public.yaml` (`application/x-yaml`).
    public static let yaml = BuiltInTypes.type("public.yaml")
    /// `public.log` (`text/x-log`).
    public static let log = BuiltInTypes.type("public.log")

    // Source code and scripts.

    /// `public.source-code`: any source code, which is plain text. Abstract; no MIME type.
    public static let sourceCode = BuiltInTypes.type("public.source-code")
    /// `public.c-source` (`text/x-csrc`).
    public static let cSource = BuiltInTypes.type("public.c-source")
    /// `public.c-header` (`text/x-chdr`).
    public static let cHeader = BuiltInTypes.type("public.c-header")
    /// `public.c-plus-plus-source` (`text/x-c++src`).
    public static let cPlusPlusSource = BuiltInTypes.type("public.c-plus-plus-source")
    /// `public.c-plus-plus-header` (`text/x-c++hdr`).
    public static let cPlusPlusHeader = BuiltInTypes.type("public.c-plus-plus-header")
    /// `public.objective-c-source` (`text/x-objcsrc`).
    public static let objectiveCSource = BuiltInTypes.type("public.objective-c-source")
    /// `public.objective-c-plus-plus-source` (`text/x-objc++src`).
    public static let objectiveCPlusPlusSource = BuiltInTypes.type("public.objective-c-plus-plus-source")
    /// `public.swift-source` (`text/x-swift`).
    public static let swiftSource = BuiltInTypes.type("public.swift-source")
    /// `public.make-source` (`text/x-makefile`).
    public static let makefile = BuiltInTypes.type("public.make-source")
    /// `public.script`: source code run by an interpreter. Abstract; no MIME type.
    public static let script = BuiltInTypes.type("public.script")
    /// `com.netscape.javascript-source` (`text/javascript`).
    public static let javaScript = BuiltInTypes.type("com.netscape.javascript-source")
    /// `public.shell-script` (`application/x-shellscript`).
    public static let shellScript = BuiltInTypes.type("public.shell-script")
    /// `public.python-script` (`text/x-python`).
    public static let pythonScript = BuiltInTypes.type("public.python-script")
    /// `public.ruby-script` (`application/x-ruby`).
    public static let rubyScript = BuiltInTypes.type("public.ruby-script")
    /// `public.perl-script` (`application/x-perl`).
    public static let perlScript = BuiltInTypes.type("public.perl-script")
    /// `public.php-script` (`application/x-php`).
    public static let phpScript = BuiltInTypes.type("public.php-script")

    // Structured data.

    /// `com.apple.property-list`: a property list, XML or binary. Abstract; no MIME type.
    public static let propertyList = BuiltInTypes.type("com.apple.property-list")
    /// `com.apple.xml-property-list`: a property list as XML. No MIME type of its own on Linux:
    /// written under its identifier.
    public static let xmlPropertyList = BuiltInTypes.type("com.apple.xml-property-list")
    /// `com.apple.binary-property-list`: a binary property list. No MIME type on Linux:
    /// written under its identifier.
    public static let binaryPropertyList = BuiltInTypes.type("com.apple.binary-property-list")
    /// `public.geojson` (`application/geo+json`).
    public static let geoJSON = BuiltInTypes.type("public.geojson")

    // Links.

    /// `public.url` (`text/uri-list`): one URL per line, as RFC 2483 says.
    public static let url = BuiltInTypes.type("public.url")
    /// `public.file-url` (`text/uri-list`): the server writes file URLs under the same MIME
    /// type as other URLs, so `text/uri-list` reads back as `.url`.
    public static let fileURL = BuiltInTypes.type("public.file-url")

    // Images.

    /// `public.image`: any image; every `image/…` type conforms to it. Abstract; no MIME type.
    public static let image = BuiltInTypes.type("public.image")
    /// `public.png` (`image/png`).
    public static let png = BuiltInTypes.type("public.png")
    /// `public.jpeg` (`image/jpeg`).
    public static let jpeg = BuiltInTypes.type("public.jpeg")
    /// `public.tiff` (`image/tiff`).
    public static let tiff = BuiltInTypes.type("public.tiff")
    /// `com.compuserve.gif` (`image/gif`).
    public static let gif = BuiltInTypes.type("com.compuserve.gif")
    /// `com.microsoft.bmp` (`image/bmp`).
    public static let bmp = BuiltInTypes.type("com.microsoft.bmp")
    /// `org.webmproject.webp` (`image/webp`).
    public static let webP = BuiltInTypes.type("org.webmproject.webp")
    /// `public.heic` (`image/heic`).
    public static let heic = BuiltInTypes.type("public.heic")
    /// `public.svg-image` (`image/svg+xml`).
    public static let svg = BuiltInTypes.type("public.svg-image")
    /// `public.heif` (`image/heif`).
    public static let heif = BuiltInTypes.type("public.heif")
    /// `com.microsoft.ico` (`image/vnd.microsoft.icon`).
    public static let ico = BuiltInTypes.type("com.microsoft.ico")
    /// `com.apple.icns` (`image/x-icns`).
    public static let icns = BuiltInTypes.type("com.apple.icns")
    /// `public.camera-raw-image` (`image/x-dcraw`): a camera's raw image.
    public static let rawImage = BuiltInTypes.type("public.camera-raw-image")
    /// `public.3d-content`: three-dimensional scenes and models. Abstract; no MIME type.
    public static let threeDContent = BuiltInTypes.type("public.3d-content")
    /// `com.pixar.universal-scene-description-mobile` (`model/vnd.usdz+zip`).
    public static let usdz = BuiltInTypes.type("com.pixar.universal-scene-description-mobile")

    // Documents.

    /// `com.adobe.pdf` (`application/pdf`).
    public static let pdf = BuiltInTypes.type("com.adobe.pdf")
    /// `public.zip-archive` (`application/zip`).
    public static let zip = BuiltInTypes.type("public.zip-archive")
    /// `public.archive`: files packed into one, compressed or not. Abstract; no MIME type.
    public static let archive = BuiltInTypes.type("public.archive")
    /// `org.gnu.gnu-zip-archive` (`application/gzip`).
    public static let gzip = BuiltInTypes.type("org.gnu.gnu-zip-archive")
    /// `public.bzip2-archive` (`application/x-bzip2`).
    public static let bz2 = BuiltInTypes.type("public.bzip2-archive")
    /// `public.tar-archive` (`application/x-tar`).
    public static let tarArchive = BuiltInTypes.type("public.tar-archive")
    /// `public.disk-image`: a disk image. Abstract; no MIME type.
    public static let diskImage = BuiltInTypes.type("public.disk-image")
    /// `org.idpf.epub-container` (`application/epub+zip`).
    public static let epub = BuiltInTypes.type("org.idpf.epub-container")
    /// `public.spreadsheet`: any spreadsheet. Abstract; no MIME type.
    public static let spreadsheet = BuiltInTypes.type("public.spreadsheet")
    /// `public.presentation`: any presentation. Abstract; no MIME type.
    public static let presentation = BuiltInTypes.type("public.presentation")
    /// `public.database`: any database. Abstract; no MIME type.
    public static let database = BuiltInTypes.type("public.database")

    // Contacts, messages and events.

    /// `public.contact`: a contact. Abstract; no MIME type.
    public static let contact = BuiltInTypes.type("public.contact")
    /// `public.vcard` (`text/vcard`).
    public static let vCard = BuiltInTypes.type("public.vcard")
    /// `public.message`: any message. Abstract; no MIME type.
    public static let message = BuiltInTypes.type("public.message")
    /// `public.email-message` (`message/rfc822`).
    public static let emailMessage = BuiltInTypes.type("public.email-message")
    /// `public.calendar-event` (`text/calendar`).
    public static let calendarEvent = BuiltInTypes.type("public.calendar-event")
    /// `public.to-do-item`: a task. Abstract; no MIME type.
    public static let toDoItem = BuiltInTypes.type("public.to-do-item")

    // Files and links.

    /// `public.directory` (`inode/directory`): a directory. Not data: it conforms only to
    /// `.item`, as `inode/…` types conform to nothing on the server.
    public static let directory = BuiltInTypes.type("public.directory")
    /// `public.folder` (`inode/directory`): a directory a person sees as a folder.
    public static let folder = BuiltInTypes.type("public.folder")
    /// `public.symlink` (`inode/symlink`): a symbolic link.
    public static let symbolicLink = BuiltInTypes.type("public.symlink")
    /// `public.executable`: anything that can run. Abstract; no MIME type.
    public static let executable = BuiltInTypes.type("public.executable")
    /// `public.unix-executable` (`application/x-executable`).
    public static let unixExecutable = BuiltInTypes.type("public.unix-executable")
    /// `com.microsoft.windows-executable` (`application/x-ms-dos-executable`).
    public static let exe = BuiltInTypes.type("com.microsoft.windows-executable")
    /// `public.bookmark`: a link saved for later. Abstract; no MIME type.
    public static let bookmark = BuiltInTypes.type("public.bookmark")
    /// `com.microsoft.internet-shortcut` (`application/x-mswinurl`).
    public static let internetShortcut = BuiltInTypes.type("com.microsoft.internet-shortcut")

    // Fonts and security.

    /// `public.font`: any font; every `font/…` type conforms to it. Abstract; no MIME type.
    public static let font = BuiltInTypes.type("public.font")
    /// `com.rsa.pkcs-12` (`application/pkcs12`).
    public static let pkcs12 = BuiltInTypes.type("com.rsa.pkcs-12")
    /// `public.x509-certificate` (`application/pkix-cert`).
    public static let x509Certificate = BuiltInTypes.type("public.x509-certificate")

    // Audio and video.

    /// `public.audiovisual-content`: any audio or video; every `audio/…` and `video/…` type
    /// conforms to it. Abstract; no MIME type.
    public static let audiovisualContent = BuiltInTypes.type("public.audiovisual-content")
    /// `public.movie`: any video; every `video/…` type conforms to it. Abstract; no MIME type.
    public static let movie = BuiltInTypes.type("public.movie")
    /// `public.audio`: any audio; every `audio/…` type conforms to it. Abstract; no MIME type.
    public static let audio = BuiltInTypes.type("public.audio")
    /// `public.video`: video without audio. Abstract; no MIME type (`video/…` types conform
    /// to `.movie`, which may carry sound).
    public static let video = BuiltInTypes.type("public.video")
    /// `public.mpeg-4` (`video/mp4`).
    public static let mpeg4Movie = BuiltInTypes.type("public.mpeg-4")
    /// `com.apple.quicktime-movie` (`video/quicktime`).
    public static let quickTimeMovie = BuiltInTypes.type("com.apple.quicktime-movie")
    /// `public.mp3` (`audio/mpeg`).
    public static let mp3 = BuiltInTypes.type("public.mp3")
    /// `public.mpeg-4-audio` (`audio/mp4`).
    public static let mpeg4Audio = BuiltInTypes.type("public.mpeg-4-audio")
    /// `public.mpeg` (`video/mpeg`).
    public static let mpeg = BuiltInTypes.type("public.mpeg")
    /// `public.mpeg-2-video` (`video/mpeg2`).
    public static let mpeg2Video = BuiltInTypes.type("public.mpeg-2-video")
    /// `public.mpeg-2-transport-stream` (`video/mp2t`).
    public static let mpeg2TransportStream = BuiltInTypes.type("public.mpeg-2-transport-stream")
    /// `public.avi` (`video/x-msvideo`).
    public static let avi = BuiltInTypes.type("public.avi")
    /// `public.aiff-audio` (`audio/x-aiff`).
    public static let aiff = BuiltInTypes.type("public.aiff-audio")
    /// `com.microsoft.waveform-audio` (`audio/wav`).
    public static let wav = BuiltInTypes.type("com.microsoft.waveform-audio")
    /// `public.midi-audio` (`audio/midi`).
    public static let midi = BuiltInTypes.type("public.midi-audio")
    /// `public.playlist`: a list of media to play. Abstract; no MIME type.
    public static let playlist = BuiltInTypes.type("public.playlist")
    /// `public.m3u-playlist` (`audio/x-mpegurl`).
    public static let m3uPlaylist = BuiltInTypes.type("public.m3u-playlist")

    // This library's own.

    /// `org.pasteboardd.attributed-string`
    /// (`application/vnd.pasteboardd.attributed-string+json`): an `AttributedString` with its
    /// Foundation attributes, as JSON. Conforms to `.json`.
    ///
    /// Not one of Apple's types: Foundation on Linux has no `Codable` `AttributedString`, so
    /// this library defines the format (see `AttributedString`'s `Transferable` conformance).
    public static let attributedString = BuiltInTypes.type("org.pasteboardd.attributed-string")
}
