import Foundation

/// Whether the connection would carry passwords and children's answers across a network without TLS that
/// checks who answers. libpq's default (`sslmode=prefer`) encrypts when the server offers it but takes any
/// certificate, and falls back to plain text without a word; `require` and `verify-ca` still let a
/// machine in the middle answer in the server's name. Only `verify-full` (the certificate chains to
/// `sslrootcert` and names the host) protects them. A unix socket or a loopback address crosses no
/// network and needs none of it.
extension PostgresSettings {
    /// The hosts the URL (and libpq's `PGHOST`) reach over a network with an `sslmode` weaker than
    /// `verify-full`, or an empty list when every connection stays on this machine or is verified.
    public func unverifiedNetworkHosts(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let parsed = url.map(Self.parse) ?? (hosts: [], parameters: [:])
        let sslmode = parsed.parameters["sslmode"] ?? environment["PGSSLMODE"] ?? "prefer"
        guard sslmode != "verify-full" else { return [] }
        var hosts = parsed.hosts
        if let host = parsed.parameters["host"] { hosts = host.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        if hosts.allSatisfy(\.isEmpty), let host = environment["PGHOST"] {
            hosts = host.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        if let addresses = parsed.parameters["hostaddr"] {
            // libpq connects to hostaddr instead of resolving host: those are the addresses that count.
            hosts = addresses.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        return hosts.filter { !Self.staysOnThisMachine($0) }
    }

    /// The message that refuses such a URL at start, naming the hosts (never the password).
    public func unverifiedTransportProblem(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let hosts = unverifiedNetworkHosts(environment: environment)
        guard !hosts.isEmpty else { return nil }
        return "the database \(redacted) is reached over the network (\(hosts.joined(separator: ", "))) without "
            + "sslmode=verify-full, so its password and the children's answers could be read or changed on the way: add "
            + "sslmode=verify-full&sslrootcert=<the database's CA certificate> to the URL (docs/operations.md, "
            + "\"Deploying with TLS\"), or set allowUnverifiedDatabase (STORYCIRCLE_ALLOW_UNVERIFIED_DATABASE=true) "
            + "for a network you trust"
    }

    /// A unix socket (a path, or an abstract `@name`), the default socket (empty), or a loopback name or address.
    static func staysOnThisMachine(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        return name.isEmpty || name.hasPrefix("/") || name.hasPrefix("@") || name == "localhost"
            || name == "::1" || name.hasPrefix("127.")
    }

    /// The URL's hosts (from its authority, without user, password or ports) and its query parameters,
    /// percent-decoded, as libpq reads them.
    static func parse(_ url: String) -> (hosts: [String], parameters: [String: String]) {
        guard let scheme = url.range(of: "://") else { return ([], [:]) }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let hosts = authority.split(separator: ",", omittingEmptySubsequences: false).map { entry -> String in
            let decoded = String(entry).removingPercentEncoding ?? String(entry)
            if decoded.hasPrefix("["), let close = decoded.firstIndex(of: "]") { return String(decoded[...close]) }
            return String(decoded.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        }
        var parameters: [String: String] = [:]
        if let query = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: query)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { continue }
                let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                parameters[key] = String(parts[1]).removingPercentEncoding ?? String(parts[1])
            }
        }
        return (hosts, parameters)
    }
}
