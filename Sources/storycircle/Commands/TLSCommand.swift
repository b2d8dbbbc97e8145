import Foundation
import LocalCertificates
import StoryCircleApp

/// `tls init`: this laptop's certificate authority (made once, then kept) and a server certificate for
/// its names and addresses (issued again on every run), in `<data>/tls`, where `serve` and `start` find
/// them.
struct TLSInitCommand: ParsableCommand {
    static let data = CommandSpec.Option(long: "data", valueName: "directory", help: "The server's data folder; the files go in <directory>/tls.", defaultValue: "data")
    static let name = CommandSpec.Option(long: "name", valueName: "name", help: "Another host name the certificate is for (repeat for more).")
    static let address = CommandSpec.Option(long: "address", valueName: "ip", help: "Another IP address the certificate is for (repeat for more).")
    static let force = CommandSpec.Option(long: "force", valueName: nil, help: "Make a new certificate authority: every device must then trust the new one.")

    var configFile: String?
    var dataDirectory: String?
    var request: ServerCertificateRequest
    var newAuthority: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        configFile = arguments.value(of: ServerOptions.config)
        dataDirectory = arguments.value(of: Self.data)
        if dataDirectory?.isEmpty == true { throw UsageError("The value '' is invalid for '\(Self.data.usage)': name a folder.") }
        let names = arguments.values(of: Self.name)
        let addresses = arguments.values(of: Self.address)
        for name in names where ServerCertificateRequest.hostName(name) == nil {
            throw UsageError("The value '\(name.prefix(80))' is invalid for '\(Self.name.usage)': use a host name of letters, digits, '-' and '.'.")
        }
        for address in addresses where ServerCertificateRequest.address(address) == nil {
            throw UsageError("The value '\(address.prefix(80))' is invalid for '\(Self.address.usage)': use an IPv4 or IPv6 address.")
        }
        do {
            request = try ServerCertificateRequest.thisMachine(names: names, addresses: addresses)
        } catch {
            throw UsageError(error.description)
        }
        newAuthority = arguments.isSet(Self.force)
    }

    func run() async throws -> Int32 {
        // The folder `serve` would use: the option, else the configuration file and environment's.
        let data = try dataDirectory ?? VoicesCommand.configuration(file: configFile).files.dataDirectory
        let folder = LocalTLSFolder(dataDirectory: data)
        let outcome: LocalTLSFolder.Outcome
        do {
            outcome = try folder.initialise(request: request, newAuthority: newAuthority)
        } catch {
            throw CommandFailure(error.description)
        }
        let day = Date.ISO8601FormatStyle().year().month().day()
        if outcome.authorityIsNew {
            Output.line("Made a certificate authority for this laptop: \(folder.authorityCertificate)")
            Output.line("  its key \(folder.authorityKey) never leaves this laptop; valid until \(outcome.authority.notAfter.formatted(day))")
        } else {
            Output.line("Kept this laptop's certificate authority: \(folder.authorityCertificate) (devices that trust it keep trusting)")
        }
        Output.line("Made the server certificate: \(folder.serverCertificate) (key: \(folder.serverKey)), valid until \(outcome.server.notAfter.formatted(day)), for:")
        Output.line("  " + outcome.request.entries.joined(separator: ", "))
        Output.line("Certificate authority SHA-256 fingerprint:")
        Output.line("  \(outcome.authority.sha256Fingerprint)")
        Output.line("Children's devices must trust \(folder.authorityCertificate) once: see docs/operations.md, \"HTTPS on one laptop\".")
        Output.line("'storycircle serve' and 'start' with this data folder now speak HTTPS; a running server: restart it, or send it SIGHUP.")
        Output.line("Run this again when the laptop's address changes: the authority is kept.")
        return ExitCode.success
    }
}
