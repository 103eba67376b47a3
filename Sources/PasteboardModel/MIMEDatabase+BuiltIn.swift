/// The fallback used when no shared-mime-info files can be read (a minimal container, say).
///
/// Lines copied from shared-mime-info for the types people copy and paste most, in the
/// files' own format so they go through the same parser. It keeps conformance sane, not
/// complete: install shared-mime-info for the full database.
extension MIMEDatabase {
    static let builtInSubclasses = """
        application/xml text/plain
        application/ecmascript text/plain
        application/javascript application/ecmascript
        application/json application/javascript
        application/ld+json application/json
        application/geo+json application/json
        application/x-yaml text/plain
        application/rtf text/plain
        application/xhtml+xml application/xml
        application/rss+xml application/xml
        application/atom+xml application/xml
        image/svg+xml application/xml
        text/html text/plain
        text/csv text/plain
        text/markdown text/plain
        text/vcard text/plain
        text/calendar text/plain
        message/rfc822 text/plain
        application/mbox text/plain
        application/x-shellscript text/plain
        application/sql text/plain
        application/epub+zip application/zip
        application/vnd.openxmlformats-officedocument.wordprocessingml.document application/zip
        application/vnd.openxmlformats-officedocument.spreadsheetml.sheet application/zip
        application/vnd.openxmlformats-officedocument.presentationml.presentation application/zip
        application/vnd.oasis.opendocument.text application/zip
        application/vnd.oasis.opendocument.spreadsheet application/zip
        application/vnd.oasis.opendocument.presentation application/zip
        application/x-compressed-tar application/gzip
        application/x-bzip-compressed-tar application/x-bzip
        application/x-xz-compressed-tar application/x-xz
        application/x-zstd-compressed-tar application/zstd
        audio/ogg application/ogg
        video/ogg application/ogg
        audio/x-vorbis+ogg audio/ogg
        audio/x-opus+ogg audio/ogg
        video/3gpp video/mp4
        font/otf font/ttf
        video/x-matroska application/x-matroska
        inode/mount-point inode/directory
        """

    static let builtInAliases = """
        application/x-pdf application/pdf
        application/acrobat application/pdf
        text/javascript application/javascript
        application/x-javascript application/javascript
        text/ecmascript application/ecmascript
        text/rtf application/rtf
        text/xml application/xml
        text/yaml application/x-yaml
        text/x-yaml application/x-yaml
        text/x-markdown text/markdown
        text/x-csv text/csv
        text/x-vcard text/vcard
        audio/wav audio/x-wav
        audio/vnd.wave audio/x-wav
        audio/x-flac audio/flac
        audio/mp3 audio/mpeg
        audio/x-mp3 audio/mpeg
        audio/x-m4a audio/mp4
        image/x-icon image/vnd.microsoft.icon
        image/x-bmp image/bmp
        image/pjpeg image/jpeg
        image/heic image/heif
        application/x-gzip application/gzip
        application/x-bzip2 application/x-bzip
        application/x-zip-compressed application/zip
        application/x-rar application/vnd.rar
        application/x-sqlite3 application/vnd.sqlite3
        application/x-font-ttf font/ttf
        """
}
