import Foundation
import Locking
import StoryCircleCore
import StoryCircleServer
import WebAuthn

/// This node's side of passkeys: the relying party (its id and origin, from the address the server prints)
/// and the challenges it has issued (`ChallengeBook`, in this node's memory: a ceremony's two requests must
/// reach the same node, as a cluster's proxy keeps a browser on one node).
///
/// The relying party id is the host of the public address (`publicURL`, else the address the server
/// prints): the name in the TLS certificate ("storycircle.school.example", "laptop.local") or "localhost".
/// WebAuthn binds a passkey to a domain, never to an IP address, so a server reached only by its address
/// offers no passkeys (its options routes answer 404 and the pages offer the password alone).
final class PasskeyDesk: Sendable {
    let relyingParty: RelyingParty
    let book: any AccountBook
    let clock: any ServerClock
    private let challenges = Locked(ChallengeBook())

    /// The most passkeys one account may register (a teacher's laptop, phone and a key or two).
    static let maxPerAccount = 20
    static let nameLength = 1...60
    /// How recent a sign-in lets a passkey be added without typing the password (`confirmRecentSignIn`).
    static let recentSignIn = 5 * 60_000

    init(relyingParty: RelyingParty, book: any AccountBook, clock: any ServerClock) {
        self.relyingParty = relyingParty
        self.book = book
        self.clock = clock
    }

    /// The desk of a server printing `publicURL` over `book`; nil without accounts or a name.
    static func make(publicURL: String, book: (any AccountBook)?, clock: any ServerClock) -> PasskeyDesk? {
        guard let book, let relyingParty = relyingParty(publicURL: publicURL) else { return nil }
        return PasskeyDesk(relyingParty: relyingParty, book: book, clock: clock)
    }

    /// The relying party of a server printing `publicURL`; nil when its host is an IP address (or missing).
    static func relyingParty(publicURL: String) -> RelyingParty? {
        guard let url = URLComponents(string: publicURL), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host?.lowercased(), !host.isEmpty, !isAddress(host) else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let origin = "\(scheme)://\(host)" + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
        return RelyingParty(id: host, origins: [origin], requireUserVerification: true)
    }

    private static func isAddress(_ host: String) -> Bool {
        host.contains(":") || host.hasPrefix("[") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// A new challenge for `ceremony`, asked for from `address` (whose own older ones go first when it
    /// asks for too many).
    func issue(for ceremony: ChallengeBook.Ceremony, from address: String) -> [UInt8] {
        let challenge = ChallengeBook.randomChallenge()
        let now = clock.now().milliseconds
        challenges.withLock { $0.issue(challenge, for: ceremony, by: address, at: now) }
        return challenge
    }

    /// Uses up the challenge `clientDataJSON` answers, if this node issued it for `ceremony` and it is still
    /// fresh: the challenge, for the verification that follows.
    func take(answeredIn clientDataJSON: [UInt8], for ceremony: ChallengeBook.Ceremony) throws(WebAuthnError) -> [UInt8] {
        let challenge = try ClientData(json: clientDataJSON).challenge
        let now = clock.now().milliseconds
        let taken = challenges.withLock { book in Result { () throws(WebAuthnError) in try book.take(challenge, for: ceremony, at: now) } }
        try taken.get()
        return challenge
    }
}
