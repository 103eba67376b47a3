import NIOSSL
import PostgresNIO

/// The TLS of a connection to a PostgreSQL store, as libpq's `sslmode` and `sslrootcert` ask.
extension PostgresLocation {
    /// The connection's TLS: none, offered (`prefer`), or required with the certificate
    /// checked as far as the mode says.
    ///
    /// - Throws: when the trusted certificates cannot be read, saying which file.
    func tlsSetting() throws -> PostgresConnection.Configuration.TLS {
        guard tls != .disable else { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tls {
        case .disable, .prefer, .require:
            configuration.certificateVerification = .none
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        if let rootCertificates {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificates))
            } catch {
                throw StoreLocationError("cannot read the certificates to trust (sslrootcert) from \(rootCertificates): \(error)")
            }
        }
        let context = try NIOSSLContext(configuration: configuration)
        return tls == .prefer ? .prefer(context) : .require(context)
    }
}
