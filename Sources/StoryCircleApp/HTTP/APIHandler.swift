import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// The HTTP API (`docs/protocol.md`, "HTTP API"): what its routes share (the registry, the store, the
/// admin token's hash, …). The routes themselves are declared by resource in `RoomRoutes`, `StoryRoutes`,
/// `ClassRoutes`, `PictureRoutes`, `AudioRoutes` and `HealthRoutes`, each with the authority it needs;
/// `Router` matches a request and checks that authority before a handler runs.
struct APIHandler: Sendable {
    let registry: RoomRegistry
    let store: any RoomStore
    let clock: any ServerClock
    let metrics: ServerMetrics
    let transportMetrics: TransportMetrics?
    let adminTokenHash: String
    let publicURL: String
    let startedAt: ServerTime
    let audio: AudioCache?
    let qrCodes: Bool
    /// The real narrator, for the voices this node has (nil when a test injected a narrator of its own).
    var narrator: SpeechNarrator? = nil
    /// The story library (`StoryRoutes`): the store's, when it keeps one.
    var library: (any StoryLibrary)? = nil
    /// The classes (`ClassRoutes`): the store's, when it keeps them.
    var classes: (any ClassBook)? = nil
    /// The pictures (`PictureRoutes`): the store's, when it keeps them.
    var pictures: (any PictureStore)? = nil
    /// One child's data exported and erased, rooms deleted early (`ChildDataRoutes`): the store's.
    var childData: (any ChildDataBook)? = nil
    /// How names are told apart, for class names and children's names.
    var lookalikes: (any ConfusableSkeleton)? = nil
    /// The most WebSockets the transport accepts: the configured figure, or less under the open-file limit.
    var maxConnections: Int? = nil
    /// Refusals for want of authority, counted per address (nil: never limited, as in most tests).
    var refused: RefusedRequests? = nil
    /// The one-time sign-in codes this node printed (`SignInRoutes`); nil: no sign-in links here.
    var signIns: SignInDesk? = nil
    /// The adults' accounts and schools (`AccountRoutes`): the store's, when it keeps them.
    var accounts: (any AccountBook)? = nil
    /// Argon2id off the cooperative pool, for every route that hashes or checks a password.
    var passwords: PasswordHasher? = nil
    /// Who owns the classes, rooms, stories and pictures (`OwnershipRoutes`): the store's, when it keeps them.
    var ownership: (any OwnershipBook)? = nil
    /// Accounts' sessions and password sign-ins (`SessionRoutes`); nil where the store keeps no accounts.
    var sessions: SessionDesk? = nil

    /// The audit trail (`AuditRoutes`): the store's. Nil only in tests that leave it out (nothing recorded).
    var auditTrail: AuditTrail? = nil

    /// Passkeys (`PasskeyRoutes`): nil where the store keeps no accounts or the server has no name to be a
    /// WebAuthn relying party for (`PasskeyDesk.relyingParty(publicURL:)`).
    var passkeys: PasskeyDesk? = nil

    /// What roster imports made, and the transaction an import is (`RosterRoutes`): the store's.
    var roster: (any RosterBook)? = nil

    /// The disabled accounts, whose rooms' teacher tokens control nothing (the rooms' own set).
    var disabledOwners: DisabledOwners? = nil

    /// The schools' own retention rules (`RetentionRoutes`), and the server's configured ones they replace.
    var retention: (any RetentionBook)? = nil
    var retentionDefaults = ServerConfiguration.Storage().retentionDefaults

    /// Every route of the API, by resource.
    static let router = Router([HealthRoutes(), RoomRoutes(), StoryRoutes(), ClassRoutes(), ChildDataRoutes(), PictureRoutes(), AudioRoutes(), SignInRoutes(), AccountRoutes(), RetentionRoutes(), OwnershipRoutes(), AuditRoutes(), SessionRoutes(), PasskeyRoutes(), AccountPasskeyRoutes(), RosterRoutes()])

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        await Self.router.respond(to: request, with: self)
    }

    // MARK: - What routes share

    func decodeObject(_ body: [UInt8]) throws -> [String: JSONValue] {
        guard !body.isEmpty else { throw HTTPError(.invalidMessage, "The request needs a JSON body.") }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(body)) else {
            throw HTTPError(.invalidJSON, "The body is not valid JSON.")
        }
        guard case .object(let object) = value else { throw HTTPError(.invalidMessage, "The body must be a JSON object.") }
        return object
    }

    func issuesJSON(_ issues: [ValidationIssue]) -> JSONValue {
        .array(issues.map {
            .object([
                "severity": .string($0.severity.rawValue), "path": .string($0.path), "code": .string($0.code.rawValue),
                "params": .object($0.params.mapValues(JSONValue.string)), "message": .string($0.message),
            ])
        })
    }

    /// `invalid_story` with every issue, as the validator words them.
    func invalidStory(_ issues: [ValidationIssue]) -> HTTPError {
        let errors = issues.filter { $0.severity == .error }
        return HTTPError(.invalidStory, "The story has problems: \(errors.map(\.description).joined(separator: "; "))", extra: ["issues": issuesJSON(issues)])
    }
}
