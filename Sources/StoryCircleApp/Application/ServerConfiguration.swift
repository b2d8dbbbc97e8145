import Foundation
import StoryCircleCore
import StoryCircleServer

/// Everything an operator can set, in groups: where it listens, its files, what one connection may do, the
/// store, rooms, voices and the log. Read from `config/storycircle.json` (flat keys, every one optional),
/// then the `STORYCIRCLE_*` environment variables, then command-line flags, each overriding the one before.
/// Each setting's key and variable are declared once, in `ServerConfiguration.settings`.
public struct ServerConfiguration: Sendable, Equatable {
    public var network = Network()
    public var tls = TLS()
    public var files = Files()
    public var connections = Connections()
    public var storage = Storage()
    public var rooms = Rooms()
    public var signIn = SignIn()
    public var voices = Voices()
    public var logging = Logging()

    public init() {}

    /// Where the server listens, and who may connect.
    public struct Network: Sendable, Equatable {
        public var port = 8080
        /// The address to listen on; empty for every interface.
        public var bindAddress: String?
        /// How children reach the server (`http://192.168.1.20:8080`); detected from the network when empty.
        public var publicURL: String?
        public var allowedOrigins: [String] = []
        public var trustForwardedFor = false
        /// Required to create and list rooms over HTTP; generated into `<dataDirectory>/admin-token` when unset.
        public var adminToken: String?
        /// The key rooms' tokens are authenticated with (`RoomTokens`): a file of at least 32 bytes, readable
        /// by its owner alone. Every node of a cluster must be given the same one; a single server makes its
        /// own in `<dataDirectory>/token-key` when unset.
        public var tokenKeyFile: String?
        /// The same key given as text (at least 32 characters), for containers given their secrets in the
        /// environment, as they are given the admin token.
        public var tokenKey: String?
    }

    /// HTTPS and WSS: the certificate and key (PEM files), and a port that redirects plain HTTP to HTTPS.
    /// With neither file set, `<dataDirectory>/tls/server.crt` and `server.key` are used when both exist
    /// (`storycircle tls init` makes them); without any, the server speaks plain HTTP.
    public struct TLS: Sendable, Equatable {
        public var certificate: String?
        public var key: String?
        public var redirectPort: Int?
    }

    /// The folders and files the server reads and writes.
    public struct Files: Sendable, Equatable {
        public var webRoot = "web-static"
        public var dataDirectory = "data"
        /// The sample stories put in the story library on first start (each once: one a teacher deleted
        /// stays deleted). A folder that does not exist adds none.
        public var sampleStoriesDirectory = "config/stories"
        public var audioCacheDirectory = "data/audio-cache"
        public var audioCacheMegabytes = 512
    }

    /// What one connection may do: every limit here protects the server from one client.
    public struct Connections: Sendable, Equatable {
        public var maxMessageBytes = 4_096
        public var maxConnections = 20_000
        /// Open WebSockets per client address (0: no limit): one device's flood cannot take the others'
        /// places. Behind NAT or a proxy many devices share an address (see `trustForwardedFor`).
        public var maxConnectionsPerAddress = 50
        /// Open HTTP connections per client address (0: no limit), counted apart from WebSockets: pages,
        /// pictures and API calls. A browser opens about six at once per server.
        public var maxHTTPConnectionsPerAddress = 32
        /// A WebSocket that has not said who it is (join, rejoin, watch, control) after this long is closed.
        public var helloTimeoutSeconds = 10.0
        /// A connection with more unsent data than this is dropped (it can rejoin): one stalled device
        /// cannot make the server hold memory for it without bound.
        public var maxQueuedKilobytesPerConnection = 1_024
        public var maxQueuedMessagesPerConnection = 2_048
        /// The kernel send buffer per connection (the rest of what a stalled device can make us hold).
        public var socketSendBufferKilobytes = 256
        /// Frames queued together for one connection go out in one `send`. `false` is for measuring only
        /// (docs/operations.md).
        public var coalesceWrites = true
        /// Messages a connection may send per second, and at once; beyond that it is closed as a flood.
        public var messagesPerSecondPerConnection = 10.0
        public var messageBurstPerConnection = 40
        /// Keepalive: a connection silent this long is pinged, and one that stays silent this long is
        /// closed (a tablet that slept or left the Wi-Fi without saying goodbye).
        public var pingAfterIdleSeconds = 20
        public var hangUpAfterIdleSeconds = 60
    }

    /// Where rooms' records live, how long, and the cluster's leases.
    public struct Storage: Sendable, Equatable {
        /// The SQLite file, relative to the working directory; `"none"` keeps rooms in memory only; a
        /// PostgreSQL URL keeps them there, shared by the nodes.
        public var database = "data/storycircle.sqlite"
        /// A PostgreSQL URL that reaches its server across a network without `sslmode=verify-full` is
        /// refused at start (`PostgresSettings.unverifiedTransportProblem`) unless this is set: for a
        /// network the operator trusts as much as the machine itself.
        public var allowUnverifiedDatabase = false
        /// Rooms (and every child's data in them) are deleted this many days after creation.
        public var retentionDays = 30
        /// A child taken out of a class: their member record (name, picture), and anything of theirs the
        /// rooms still keep, is deleted this many days later. 0: kept until the class is deleted.
        public var removedMemberRetentionDays = 30
        /// A class neither changed nor used by a room for this many days is deleted, with its list of
        /// children. 0 (the default): never; a class is a teacher's work, not deleted behind their back.
        public var classRetentionDays = 0
        /// A library story neither changed nor started by a room for this many days is deleted; a picture
        /// stored this many days ago that no story or room names is deleted. 0 (the defaults): never.
        public var storyRetentionDays = 0
        public var pictureRetentionDays = 0
        /// Audit rows (who read, exported, erased or changed what) are deleted this many days after they
        /// were written: 400, a school year and the audit that follows it.
        public var auditRetentionDays = 400
        /// Finished rooms stay in memory this long for their podium; after that they are read from storage.
        public var finishedRoomMinutes = 60
        /// How long a record that cannot be stored is tried again (the child's page shows "Sending…")
        /// before the room gives up on it: the answer is refused with `storage_unavailable`, the room
        /// rebuilds itself from what is stored, and nothing that depended on the record is ever sent.
        public var storageRetrySeconds = 5
        /// This process's name in room leases (`RoomLeases`): unique among the nodes sharing a database.
        /// The default (host name and process id) is unique on its own; set it to read logs and lease rows
        /// easily.
        public var nodeId: String?
        /// How long a room lease lasts without renewal: how long the rooms of a node that died wait before
        /// another node may take them over. Renewed every third of it.
        public var leaseSeconds = 10

        /// Whether rooms' records are kept at all.
        public var usesDatabase: Bool { database != "none" }
    }

    /// Joining rooms, and the settings a new room starts with.
    public struct Rooms: Sendable, Equatable {
        /// Hellos per address that prove nothing (a code without a token): a burst, then a steady rate.
        public var joinBurst = 60
        public var joinsPerSecond = 2.0
        /// Wrong room codes and tokens per address before its hellos wait, the rate that budget comes back,
        /// and the longest wait (docs/operations.md, "Guessing room codes").
        public var failedJoinBurst = 30
        public var failedJoinsPerMinute = 10.0
        public var failedJoinMaxDelaySeconds = 30.0
        /// Digits in a new room's code, 6 to 12.
        public var roomCodeDigits = 6
        public var roomDefaults = RoomSettings()
    }

    /// Password sign-ins per account and per address (docs/operations.md, "Signing in").
    public struct SignIn: Sendable, Equatable {
        public var signInAccountBurst = 10
        public var signInAccountRefillSeconds = 180.0
        public var signInAddressBurst = 20
        public var signInAddressRefillSeconds = 30.0

        /// The throttle's limits.
        public var limits: SignInThrottle.Limits {
            var limits = SignInThrottle.Limits()
            limits.accountBurst = signInAccountBurst
            limits.accountRefillMilliseconds = Int(signInAccountRefillSeconds * 1_000)
            limits.addressBurst = signInAddressBurst
            limits.addressRefillMilliseconds = Int(signInAddressRefillSeconds * 1_000)
            return limits
        }
    }

    /// The voices stories are read with.
    public struct Voices: Sendable, Equatable {
        /// Where a school drops Piper voices (`NAME.onnx` and `NAME.onnx.json`); each is checked before it
        /// is offered as `piper:NAME`. The voices installed with Piper (`*_piper_voice` packages in its
        /// venv) are offered too.
        public var voicesDirectory = "voices"
        /// Whether natural voices (Piper) are offered at all; false narrates everything with espeak-ng.
        public var naturalVoice = true
        /// The Python with `piper-tts` installed, and the worker script; found next to the project (its
        /// `.venv-voice` and `scripts/piper-worker.py`, from the working folder or the program's) when unset.
        public var piperPython: String?
        public var piperWorker: String?
        /// onnxruntime threads for the Piper worker's synthesis, 1 to 8; unset (or null): what
        /// `automaticPiperThreads` picks for the cores the server may use (`resolvedPiperThreads`).
        public var piperThreads: Int?

        /// The worker's threads: `piperThreads` if the file says, else the automatic choice for this machine.
        public var resolvedPiperThreads: Int {
            piperThreads ?? ServerConfiguration.automaticPiperThreads(cores: CPUBudget.cores())
        }
    }

    /// The server's log.
    public struct Logging: Sendable, Equatable {
        public var logLevel = "info"
        /// `text` for people, `json` (one object per line) for log collectors.
        public var logFormat = "text"

        public var level: StoryCircleLog.Level {
            StoryCircleLog.Level.allCases.first { $0.name == logLevel } ?? .info
        }

        public var format: StoryCircleLog.Format {
            StoryCircleLog.Format(rawValue: logFormat) ?? .text
        }
    }

    /// A problem with the configuration, said plainly; the server refuses to start on one.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Reads `file` (if given; a missing default file is fine) and applies `environment` on top.
    public static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(Problem) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Problem(description: "cannot read the configuration file \(file)")
            }
            try configuration.apply(json: data, from: file)
        }
        try configuration.apply(environment: environment)
        try configuration.validate()
        return configuration
    }

    /// Two threads where the server may use two cores or more, one on a single core. A story started the
    /// moment its room is made waits for its first sentence: on one thread that is 0.3–0.36 s, on two
    /// 0.2–0.26 s (docs/performance.md). The worker runs at nice 10 and its pool does not spin, so the
    /// second thread takes only CPU the server's own threads leave; more threads gain little on a sentence
    /// and take more of a busy node's cores.
    public static func automaticPiperThreads(cores: Int) -> Int {
        cores >= 2 ? 2 : 1
    }

    public func validate() throws(Problem) {
        let port = network.port
        guard (0...65_535).contains(port) else { throw Problem(description: "port \(port) is not a TCP port (0 to 65535)") }
        let limits = connections
        guard (256...1_048_576).contains(limits.maxMessageBytes) else { throw Problem(description: "maxMessageBytes must be from 256 to 1048576") }
        guard limits.maxQueuedKilobytesPerConnection >= 1, limits.maxQueuedMessagesPerConnection >= 1 else {
            throw Problem(description: "maxQueuedKilobytesPerConnection and maxQueuedMessagesPerConnection must be at least 1")
        }
        guard (1...3_600).contains(limits.pingAfterIdleSeconds), limits.hangUpAfterIdleSeconds > limits.pingAfterIdleSeconds, limits.hangUpAfterIdleSeconds <= 7_200 else {
            throw Problem(description: "keepalive: pingAfterIdleSeconds must be 1 to 3600 and hangUpAfterIdleSeconds larger, at most 7200")
        }
        if let threads = voices.piperThreads, !(1...8).contains(threads) { throw Problem(description: "piperThreads must be from 1 to 8") }
        guard limits.maxConnectionsPerAddress >= 0 else { throw Problem(description: "maxConnectionsPerAddress must be 0 (no limit) or more") }
        guard limits.maxHTTPConnectionsPerAddress >= 0 else { throw Problem(description: "maxHTTPConnectionsPerAddress must be 0 (no limit) or more") }
        guard limits.helloTimeoutSeconds > 0, limits.helloTimeoutSeconds <= 3_600 else {
            throw Problem(description: "helloTimeoutSeconds must be more than 0 and at most 3600")
        }
        guard (3...300).contains(storage.leaseSeconds) else { throw Problem(description: "leaseSeconds must be from 3 to 300") }
        guard (6...12).contains(rooms.roomCodeDigits) else { throw Problem(description: "roomCodeDigits must be from 6 to 12") }
        guard rooms.failedJoinBurst >= 1, rooms.failedJoinsPerMinute > 0, (0...600).contains(rooms.failedJoinMaxDelaySeconds) else {
            throw Problem(description: "failedJoinBurst must be at least 1, failedJoinsPerMinute more than 0, failedJoinMaxDelaySeconds from 0 to 600")
        }
        guard (1...1_000).contains(signIn.signInAccountBurst), (1...1_000).contains(signIn.signInAddressBurst),
              (0.001...86_400).contains(signIn.signInAccountRefillSeconds), (0.001...86_400).contains(signIn.signInAddressRefillSeconds) else {
            throw Problem(description: "signInAccountBurst and signInAddressBurst must be from 1 to 1000, their refill seconds more than 0 and at most 86400")
        }
        guard storage.retentionDays >= 1 else { throw Problem(description: "retentionDays must be at least 1") }
        guard [storage.removedMemberRetentionDays, storage.classRetentionDays, storage.storyRetentionDays, storage.pictureRetentionDays].allSatisfy({ $0 >= 0 }) else {
            throw Problem(description: "removedMemberRetentionDays, classRetentionDays, storyRetentionDays and pictureRetentionDays must be 0 (never) or more")
        }
        guard (1...36_500).contains(storage.auditRetentionDays) else { throw Problem(description: "auditRetentionDays must be from 1 to 36500") }
        guard (1...300).contains(storage.storageRetrySeconds) else { throw Problem(description: "storageRetrySeconds must be from 1 to 300") }
        guard files.audioCacheMegabytes >= 1 else { throw Problem(description: "audioCacheMegabytes must be at least 1") }
        guard ["debug", "info", "notice", "warning", "error"].contains(logging.logLevel) else {
            throw Problem(description: "logLevel must be one of debug, info, notice, warning, error")
        }
        guard StoryCircleLog.Format(rawValue: logging.logFormat) != nil else {
            throw Problem(description: "logFormat must be text or json")
        }
        try validateTLS()
        if let publicURL = network.publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
            throw Problem(description: "publicURL must start with http:// or https://")
        }
    }

    /// The server's log as configured, to `sink`.
    public func log(label: String = "storycircle", sink: @escaping @Sendable (String) -> Void = StoryCircleLog.standardError) -> StoryCircleLog {
        StoryCircleLog(label: label, minimumLevel: logging.level, format: logging.format, sink: sink)
    }

    /// What the room registry takes of this.
    public var registrySettings: RoomRegistry.Settings {
        var settings = RoomRegistry.Settings()
        settings.nodeId = storage.nodeId
        settings.leaseSeconds = storage.leaseSeconds
        settings.storageRetrySeconds = storage.storageRetrySeconds
        settings.retentionDays = storage.retentionDays
        settings.joinBurst = rooms.joinBurst
        settings.joinsPerSecond = rooms.joinsPerSecond
        settings.failedJoinBurst = rooms.failedJoinBurst
        settings.failedJoinsPerMinute = rooms.failedJoinsPerMinute
        settings.failedJoinMaxDelaySeconds = rooms.failedJoinMaxDelaySeconds
        settings.roomCodeDigits = rooms.roomCodeDigits
        settings.roomDefaults = rooms.roomDefaults
        return settings
    }
}

extension ServerConfiguration.Storage {
    /// The configured retention: what applies where a school chose nothing (`SchoolRetention`).
    public var retentionDefaults: RetentionDefaults {
        RetentionDefaults([
            .rooms: retentionDays, .removedMembers: removedMemberRetentionDays, .classes: classRetentionDays, .stories: storyRetentionDays,
            .pictures: pictureRetentionDays, .audit: auditRetentionDays,
        ])
    }
}
