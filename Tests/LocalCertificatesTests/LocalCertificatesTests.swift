import COpenSSL
import Foundation
import Glibc
import Testing
@testable import LocalCertificates

/// The authority and the server certificate as a browser would judge them: read back from the files,
/// checked with OpenSSL's verifier called here directly, not through `CertificateChain`.
struct LocalCertificatesTests {
    private static func temporaryData() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static let request = try! ServerCertificateRequest(
        hostNames: ["laptop", "laptop.local", "localhost", "storycircle.school.example"],
        addresses: ["127.0.0.1", "::1", "192.168.1.20", "fd00::20"]
    )

    private static func mode(_ path: String) -> mode_t {
        var status = stat()
        #expect(stat(path, &status) == 0)
        return status.st_mode & 0o777
    }

    /// X509_verify_cert with only `authority` trusted, for a TLS server's purpose.
    private static func verifies(_ leaf: Certificate, trusting authority: Certificate, at time: Date? = nil) -> Bool {
        withExtendedLifetime((leaf, authority)) { verifying(leaf, trusting: authority, at: time) }
    }

    private static func verifying(_ leaf: Certificate, trusting authority: Certificate, at time: Date?) -> Bool {
        let store = X509_STORE_new()!
        defer { X509_STORE_free(store) }
        X509_STORE_add_cert(store, authority.pointer)
        let context = X509_STORE_CTX_new()!
        defer { X509_STORE_CTX_free(context) }
        X509_STORE_CTX_init(context, store, leaf.pointer, nil)
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        if let time { X509_STORE_CTX_set_time(context, 0, time_t(time.timeIntervalSince1970)) }
        return X509_verify_cert(context) == 1
    }

    private static func read(_ path: String) throws -> [Certificate] {
        try Certificate.readAll(pem: try #require(FileManager.default.contents(atPath: path)))
    }

    @Test func initialiseWritesAnAuthorityAndAServerChainThatVerifies() throws {
        let folder = LocalTLSFolder(dataDirectory: try Self.temporaryData())
        let outcome = try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop")
        #expect(outcome.authorityIsNew)
        let authority = try Self.read(folder.authorityCertificate)
        let chain = try Self.read(folder.serverCertificate)
        #expect(authority.count == 1)
        #expect(chain.count == 2, "server.crt is the server's certificate, then the authority's")
        #expect(chain[1].sha256Fingerprint == authority[0].sha256Fingerprint)
        #expect(Self.verifies(chain[0], trusting: authority[0]))
        // Another authority, however alike, is not trusted for it.
        let stranger = try LocalAuthority.create(hostName: "laptop", vouchingFor: Self.request)
        #expect(!Self.verifies(chain[0], trusting: stranger.certificate))
    }

    @Test func theAuthorityIsACriticalCAForSigningOnlyAndTheServerIsForServersOnly() throws {
        let authority = try LocalAuthority.create(hostName: "laptop", vouchingFor: Self.request)
        let ca = authority.certificate.pointer
        #expect(X509_check_ca(ca) == 1)
        #expect(X509_get_extension_flags(ca) & UInt32(EXFLAG_CRITICAL) == 0, "every extension is one OpenSSL knows")
        let constraints = X509_get_ext(ca, X509_get_ext_by_NID(ca, NID_basic_constraints, -1))
        #expect(X509_EXTENSION_get_critical(constraints) == 1)
        #expect(X509_get_key_usage(ca) == UInt32(KU_KEY_CERT_SIGN | KU_CRL_SIGN))
        var name = [CChar](repeating: 0, count: 256)
        X509_NAME_oneline(X509_get_subject_name(ca), &name, Int32(name.count))
        #expect(String(cString: name) == "/CN=StoryCircle local CA (laptop)")
        let lifetime = authority.certificate.notAfter.timeIntervalSince(authority.certificate.notBefore)
        #expect(abs(lifetime - Double(LocalAuthority.validityDays) * 86_400) < 2)

        let server = try authority.issue(Self.request).certificate
        #expect(X509_check_ca(server.pointer) == 0)
        #expect(X509_get_extended_key_usage(server.pointer) == UInt32(XKU_SSL_SERVER))
        #expect(X509_check_purpose(server.pointer, X509_PURPOSE_SSL_SERVER, 0) == 1)
        #expect(X509_check_purpose(server.pointer, X509_PURPOSE_SSL_CLIENT, 0) == 0)
        #expect(server.notAfter.timeIntervalSince(server.notBefore) < 397 * 86_400 + 2)
        let key = try #require(X509_get0_pubkey(server.pointer))
        #expect(EVP_PKEY_get_base_id(key) == EVP_PKEY_EC)
        var group = [CChar](repeating: 0, count: 64)
        #expect(EVP_PKEY_get_group_name(key, &group, group.count, nil) == 1)
        #expect(String(cString: group) == "prime256v1")
        // The pointers above are borrowed from these.
        withExtendedLifetime((authority, server)) {}
    }

    /// A stolen authority key mints nothing a device trusting the authority accepts for another site's name:
    /// the authority is constrained to the laptop's names, `.local` and `localhost`, and signs no other
    /// authority. Addresses are not constrained (a laptop's change with the network).
    @Test func theAuthorityVouchesOnlyForTheLaptopsNames() throws {
        let authority = try LocalAuthority.create(hostName: "laptop", vouchingFor: Self.request)
        let ca = authority.certificate.pointer
        #expect(X509_get_pathlen(ca) == 0)
        let constraints = X509_get_ext(ca, X509_get_ext_by_NID(ca, NID_name_constraints, -1))
        #expect(constraints != nil && X509_EXTENSION_get_critical(constraints) == 1)
        func verifies(_ names: [String], _ addresses: [String] = []) throws -> Bool {
            let server = try authority.issue(ServerCertificateRequest(hostNames: names, addresses: addresses)).certificate
            return Self.verifies(server, trusting: authority.certificate)
        }
        #expect(try verifies(Self.request.hostNames, Self.request.addresses))
        #expect(try verifies(["other.local", "laptop", "a.storycircle.school.example"], ["10.1.2.3", "198.51.100.7", "2001:db8::1"]))
        #expect(try !verifies(["www.google.com"]))
        #expect(try !verifies(["school.example"]), "a parent of a permitted name is not permitted")
        #expect(try !verifies(["laptop", "localhost.example"]))
        #expect(authority.outsideItsConstraints(Self.request) == nil)
        #expect(authority.outsideItsConstraints(try ServerCertificateRequest(hostNames: ["laptop", "bank.example"], addresses: [])) == "bank.example")
        withExtendedLifetime(authority) {}
    }

    /// Running `tls init` again with a name the kept authority does not vouch for says so, and how to go on,
    /// before anything is written.
    @Test func aNameOutsideTheKeptAuthorityIsRefusedWithWhatToDo() throws {
        let folder = LocalTLSFolder(dataDirectory: try Self.temporaryData())
        _ = try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop")
        let serverFile = try #require(FileManager.default.contents(atPath: folder.serverCertificate))
        let wider = try ServerCertificateRequest(hostNames: ["laptop", "storycircle.district.example"], addresses: ["10.0.0.7"])
        let refused = #expect(throws: CertificateError.self) { try folder.initialise(request: wider, newAuthority: false, hostName: "laptop") }
        #expect(refused?.description.contains("not storycircle.district.example") == true)
        #expect(refused?.description.contains("--force") == true)
        #expect(FileManager.default.contents(atPath: folder.serverCertificate) == serverFile)
        let forced = try folder.initialise(request: wider, newAuthority: true, hostName: "laptop")
        #expect(Self.verifies(try Self.read(folder.serverCertificate)[0], trusting: forced.authority))
    }

    @Test func theServerCertificateNamesEveryNameAndAddressAndNoOther() throws {
        let server = try LocalAuthority.create(hostName: "laptop", vouchingFor: Self.request).issue(Self.request).certificate
        for name in Self.request.hostNames { #expect(server.covers(hostName: name), "\(name)") }
        for address in ["127.0.0.1", "::1", "192.168.1.20", "fd00::20", "fd00:0:0:0:0:0:0:20"] {
            #expect(server.covers(address: address), "\(address)")
        }
        #expect(!server.covers(hostName: "example.com"))
        #expect(!server.covers(hostName: "other.local"))
        #expect(!server.covers(address: "192.168.1.21"))
    }

    @Test func runningAgainKeepsTheAuthorityAndIssuesANewServerCertificate() throws {
        let folder = LocalTLSFolder(dataDirectory: try Self.temporaryData())
        let first = try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop")
        let firstAuthorityFile = try #require(FileManager.default.contents(atPath: folder.authorityCertificate))
        let firstKey = try #require(FileManager.default.contents(atPath: folder.serverKey))
        // The laptop moved to another network.
        let moved = try ServerCertificateRequest(hostNames: ["laptop"], addresses: ["10.0.0.7"])
        let second = try folder.initialise(request: moved, newAuthority: false, hostName: "laptop")
        #expect(!second.authorityIsNew)
        #expect(second.authority.sha256Fingerprint == first.authority.sha256Fingerprint)
        #expect(FileManager.default.contents(atPath: folder.authorityCertificate) == firstAuthorityFile)
        #expect(FileManager.default.contents(atPath: folder.serverKey) != firstKey)
        let chain = try Self.read(folder.serverCertificate)
        #expect(chain[0].covers(address: "10.0.0.7"))
        #expect(!chain[0].covers(address: "192.168.1.20"))
        #expect(Self.verifies(chain[0], trusting: first.authority), "devices that trusted the authority trust the new certificate")

        let forced = try folder.initialise(request: moved, newAuthority: true, hostName: "laptop")
        #expect(forced.authorityIsNew)
        #expect(forced.authority.sha256Fingerprint != first.authority.sha256Fingerprint)
        #expect(!Self.verifies(try Self.read(folder.serverCertificate)[0], trusting: first.authority))
    }

    @Test func keysAre0600TheFolder0700AndEachKeyIsItsCertificates() throws {
        let data = try Self.temporaryData()
        let folder = LocalTLSFolder(dataDirectory: data)
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop")
        #expect(Self.mode(folder.path) == 0o700)
        for file in [folder.authorityKey, folder.serverKey, folder.authorityCertificate, folder.serverCertificate] {
            #expect(Self.mode(file) == 0o600, "\(file)")
        }
        let caKey = try PrivateKey.read(pem: try #require(FileManager.default.contents(atPath: folder.authorityKey)))
        let serverKey = try PrivateKey.read(pem: try #require(FileManager.default.contents(atPath: folder.serverKey)))
        let authority = try Self.read(folder.authorityCertificate)[0]
        let server = try Self.read(folder.serverCertificate)[0]
        withExtendedLifetime((authority, server, caKey, serverKey)) {
            #expect(X509_check_private_key(authority.pointer, caKey.pointer) == 1)
            #expect(X509_check_private_key(server.pointer, serverKey.pointer) == 1)
            #expect(X509_check_private_key(server.pointer, caKey.pointer) == 0)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.serverKey + ".new"))
    }

    @Test func aNewDataFolderIsMade0700() throws {
        let data = try Self.temporaryData() + "/fresh/data"
        _ = try LocalTLSFolder(dataDirectory: data).initialise(request: Self.request, newAuthority: false, hostName: "laptop")
        #expect(Self.mode(data) == 0o700)
    }

    @Test func aMissingOrForeignAuthorityKeyIsRefusedNotReplaced() throws {
        let folder = LocalTLSFolder(dataDirectory: try Self.temporaryData())
        _ = try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop")
        let authorityFile = try #require(FileManager.default.contents(atPath: folder.authorityCertificate))
        // Another key in ca.key's place.
        try LocalTLSFolder.write(try PrivateKey.generateP256().pem(), to: folder.authorityKey)
        #expect(throws: CertificateError.self) { try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop") }
        try FileManager.default.removeItem(atPath: folder.authorityKey)
        let missing = #expect(throws: CertificateError.self) { try folder.initialise(request: Self.request, newAuthority: false, hostName: "laptop") }
        #expect(missing?.description.contains("ca.key is missing") == true)
        #expect(FileManager.default.contents(atPath: folder.authorityCertificate) == authorityFile)
    }

    @Test func theServerCertificateExpiresBeforeTheAuthorityAndVerifiesUntilThen() throws {
        let now = Date()
        let authority = try LocalAuthority.create(hostName: "laptop", vouchingFor: Self.request, now: now)
        let server = try authority.issue(Self.request, now: now).certificate
        #expect(Self.verifies(server, trusting: authority.certificate, at: now.addingTimeInterval(396 * 86_400)))
        #expect(!Self.verifies(server, trusting: authority.certificate, at: now.addingTimeInterval(398 * 86_400)))
        // Issued near the authority's end, it ends with it.
        let late = now.addingTimeInterval(Double(LocalAuthority.validityDays - 30) * 86_400)
        let lastOne = try authority.issue(Self.request, now: late).certificate
        #expect(abs(lastOne.notAfter.timeIntervalSince(authority.certificate.notAfter)) < 5)
    }

    @Test func namesAndAddressesAreCheckedAndWrittenOneWay() throws {
        #expect(ServerCertificateRequest.hostName("Laptop.Local.") == "laptop.local")
        for bad in ["", "-laptop", "lap top", "laptop,IP:1.2.3.4", "*.example.com", "a..b", "192.168.1.2", String(repeating: "a", count: 64), "é.example"] {
            #expect(ServerCertificateRequest.hostName(bad) == nil, "\(bad)")
        }
        #expect(ServerCertificateRequest.address("FD00:0:0::20") == "fd00::20")
        #expect(ServerCertificateRequest.address("127.0.0.1") == "127.0.0.1")
        for bad in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "fe80::1%eth0", "::g", "1.2.3.4,DNS:evil"] {
            #expect(ServerCertificateRequest.address(bad) == nil, "\(bad)")
        }
        #expect(throws: CertificateError.self) { try ServerCertificateRequest(hostNames: ["x,DNS:evil.example"], addresses: []) }
        #expect(throws: CertificateError.self) { try ServerCertificateRequest(hostNames: [], addresses: []) }
        let many = (0..<70).map { "10.0.0.\($0)" }
        #expect(throws: CertificateError.self) { try ServerCertificateRequest(hostNames: [], addresses: many) }
        let twice = try ServerCertificateRequest(hostNames: ["a", "A"], addresses: ["::1", "0:0::1"])
        #expect(twice.entries == ["a", "::1"])
    }

    @Test func thisMachineHasItsNamesLoopbackAndInterfaceAddresses() throws {
        let request = try ServerCertificateRequest.thisMachine(names: ["extra.example"], addresses: ["10.9.8.7"])
        #expect(request.hostNames.contains("localhost"))
        #expect(request.hostNames.last == "extra.example")
        #expect(Array(request.addresses.prefix(2)) == ["127.0.0.1", "::1"])
        #expect(request.addresses.last == "10.9.8.7")
        for address in ThisMachine.interfaceAddresses() {
            #expect(request.addresses.contains(address))
            #expect(!address.hasPrefix("127."))
        }
        if let host = ServerCertificateRequest.hostName(ThisMachine.hostName()), host != "localhost" {
            #expect(request.hostNames.contains(host))
            #expect(request.hostNames.contains(String(host.split(separator: ".")[0]) + ".local"))
        }
    }
}
