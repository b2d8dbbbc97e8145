// swift-tools-version:6.0
import PackageDescription

// The layout tells the architecture: a pure core, small wrappers that are the only code to touch
// C libraries, the actor shell (the server), and the executables on top.
let package = Package(
    name: "StoryCircle",
    products: [
        .executable(name: "storycircle", targets: ["storycircle"]),
        .executable(name: "storycircle-bench", targets: ["storycircle-bench"]),
        .library(name: "StoryCircleCore", targets: ["StoryCircleCore"]),
    ],
    targets: [
        // MARK: C libraries from Debian, wrapped once each.
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // libwebsockets' event loop: its libev plugin (package libwebsockets-evlib-ev) on a loop we own.
        // (libev ships no pkg-config file; its header and library are in the default paths.)
        .systemLibrary(
            name: "CLibEV",
            providers: [.apt(["libev-dev", "libwebsockets-evlib-ev"])]
        ),
        // libsodium: the room tokens' MAC (HMAC-SHA-256), compared in constant time, the key's random bytes,
        // and the adults' passwords (Argon2id).
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // OpenSSL 3 (the one libwebsockets is built with): the server's certificates and TLS settings, and
        // `storycircle tls init`'s keys and certificates.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // libcbor: WebAuthn's attestation objects and COSE keys (Sources/WebAuthn).
        .systemLibrary(
            name: "CCBOR",
            pkgConfig: "libcbor",
            providers: [.apt(["libcbor-dev"])]
        ),
        .systemLibrary(
            name: "CEspeakNG",
            pkgConfig: "espeak-ng",
            providers: [.apt(["libespeak-ng-dev", "espeak-ng-data"])]
        ),
        .systemLibrary(
            name: "CLame",
            pkgConfig: "lame",
            providers: [.apt(["libmp3lame-dev"])]
        ),
        // libzip: the ZIP files rostering systems export (`storycircle roster import`).
        .systemLibrary(
            name: "CZip",
            pkgConfig: "libzip",
            providers: [.apt(["libzip-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // ICU's confusables (TR39) and normalisers, for telling look-alike nicknames apart.
        .systemLibrary(
            name: "CICU",
            pkgConfig: "icu-i18n",
            providers: [.apt(["libicu-dev"])]
        ),
        // libpng, libjpeg-turbo and libwebp: a small C target, because libpng's and libjpeg's errors are a longjmp
        // that must land in C (its setjmp is in these files), never across a Swift frame.
        .target(
            name: "CImageCodecs",
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg"), .linkedLibrary("webp")]
        ),
        .systemLibrary(
            name: "CPostgreSQL",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),

        // MARK: The pure core: models, validation, the room state machine, scoring, wire messages.
        .target(name: "StoryCircleCore"),
        .target(name: "QRCode"),
        // A lock ThreadSanitizer can see (see Locked.swift).
        .target(name: "Locking"),

        // What both room stores share: the group-commit writer, and the threads their blocking calls run on
        // (never Swift's cooperative pool).
        .target(name: "RoomStoreSupport", dependencies: ["StoryCircleCore", "Locking"]),

        // What the rooms and the transport share, free of C, as swift-nio's NIOCore is under NIOPosix: the
        // outbound frame (its headroom reserved by the transport), the loop executor rooms run on and its
        // timers, the transport's events and the contract rooms send through, the typed HTTP request and
        // response, the transport's counters. The shell and its tests link this, never libwebsockets.
        .target(name: "TransportCore", dependencies: ["Locking"]),

        // MARK: The wrappers: the only targets that import C.
        .target(name: "WebSocketTransport", dependencies: ["TransportCore", "CLibWebSockets", "CLibEV", "COpenSSL", "Locking"]),
        .target(name: "Speech", dependencies: ["CEspeakNG", "CLame", "Locking"]),
        // Pictures checked by decoding (PNG, JPEG, WebP), refused over the limits, re-encoded without metadata.
        .target(name: "Pictures", dependencies: ["CImageCodecs"]),
        // ZIP archives read with libzip, bounded (entries, bytes, how far one entry inflates).
        .target(name: "Zip", dependencies: ["CZip"]),
        .target(name: "SQLiteStorage", dependencies: ["CSQLite", "RoomStoreSupport", "StoryCircleCore", "Locking"]),
        .target(name: "PostgresStorage", dependencies: ["CPostgreSQL", "RoomStoreSupport", "StoryCircleCore", "Locking"]),
        .target(name: "Confusables", dependencies: ["CICU", "StoryCircleCore"]),
        .target(name: "Sodium", dependencies: ["CSodium"]),
        // A laptop's own certificate authority and the server certificate it issues for the laptop's names
        // and addresses (`storycircle tls init`), made and checked with OpenSSL's libcrypto.
        .target(name: "LocalCertificates", dependencies: ["COpenSSL"]),
        // The CLI's HTTP/1.1 client over OpenSSL: it trusts the laptop's own CA, which URLSession on Linux cannot.
        .target(name: "TLSClient", dependencies: ["COpenSSL"]),
        // Passkeys: a WebAuthn relying party (registrations, assertions, challenges). CBOR read and written
        // by libcbor, keys and signatures by OpenSSL's libcrypto, random challenges from libsodium.
        .target(name: "WebAuthn", dependencies: ["CCBOR", "COpenSSL", "Sodium", "SignatureKeys"]),
        // Public keys read from their numbers (RSA n and e, a P-256 point, an Ed25519 key) and signatures
        // checked, by OpenSSL's libcrypto: what passkeys (COSE keys) and ID tokens (JWKs) both need.
        .target(name: "SignatureKeys", dependencies: ["COpenSSL"]),
        // JOSE for OpenID Connect: compact JWS, JWK sets and ID tokens' claims (RFC 7515/7517/7519, OpenID
        // Connect Core 3.1.3.7); RS256 and ES256 only, through SignatureKeys.
        .target(name: "JOSE", dependencies: ["SignatureKeys", "Sodium"]),
        // OpenID Connect's relying party: discovery, the authorization code flow with PKCE, state and nonce,
        // the token endpoint, ID tokens checked with JOSE against the provider's keys, over TLSClient.
        .target(name: "OpenIDConnect", dependencies: ["JOSE", "Sodium", "WebAuthn", "TLSClient", "Locking"]),

        // MARK: The shell: actors that carry out what the core decides (rooms, their outboxes, the router,
        // the directory, the leases), over any store, narrator and transport it is given: it imports no C
        // library, only TransportCore's side of the transport.
        // Room tokens are checked by their MAC before any store is read (`RoomTokens`), through the Sodium wrapper.
        .target(name: "StoryCircleServer", dependencies: ["StoryCircleCore", "Locking", "TransportCore", "Sodium"]),
        // The composition: configuration, the server put together from the real transport, stores and
        // narrator, and the HTTP API.
        .target(
            name: "StoryCircleApp",
            dependencies: ["StoryCircleServer", "StoryCircleCore", "QRCode", "Locking", "TransportCore", "WebSocketTransport", "Speech", "SQLiteStorage", "PostgresStorage", "Confusables", "Pictures", "RoomStoreSupport", "Sodium", "WebAuthn"]
        ),

        // MARK: Test kits: what tests (and only tests) need to drive the shell, kept out of the targets the
        // server links, as hummingbird keeps HummingbirdTesting.
        .target(name: "StoryCircleTesting", dependencies: ["StoryCircleServer", "StoryCircleCore", "Locking"]),
        // The shell's test doubles (a recording transport, scripted narrator, stores that fail or wait on
        // the test), for the shell's tests and the app's. It reports through Swift Testing.
        .target(name: "StoryCircleServerTesting", dependencies: ["StoryCircleServer", "StoryCircleTesting", "StoryCircleCore", "TransportCore", "Locking"]),
        // The transport's kit: the libwebsockets client (tests' sockets, the bench's load) and requests for
        // handler tests. It imports libwebsockets as the transport does, being its client half: the one
        // target beside the wrappers that touches C, and no production target links it.
        .target(name: "WebSocketTransportTesting", dependencies: ["TransportCore", "WebSocketTransport", "CLibWebSockets", "Locking"]),
        // Key pairs made by OpenSSL for the tests of passkeys and ID tokens: their public numbers and signatures.
        .target(name: "SignatureKeysTesting", dependencies: ["COpenSSL"]),

        // MARK: Executables.
        .executableTarget(
            name: "storycircle",
            dependencies: ["StoryCircleApp", "StoryCircleServer", "StoryCircleCore", "QRCode", "Locking", "Pictures", "LocalCertificates", "TLSClient", "Zip"]
        ),
        .executableTarget(
            name: "storycircle-bench",
            dependencies: ["WebSocketTransport", "WebSocketTransportTesting", "StoryCircleCore", "Locking"]
        ),
        // The room stores alone: SQLite against PostgreSQL, acknowledgement latency under a steady load.
        .executableTarget(
            name: "storycircle-store-bench",
            dependencies: ["SQLiteStorage", "PostgresStorage", "StoryCircleCore", "Locking"]
        ),

        // MARK: Tests mirror the source targets.
        .testTarget(name: "StoryCircleCoreTests", dependencies: ["StoryCircleCore"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"]),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "SpeechTests", dependencies: ["Speech"]),
        // Nicknames folded with ICU's real data: the look-alike cases the core's tests give a pure table.
        .testTarget(name: "ConfusablesTests", dependencies: ["Confusables", "StoryCircleCore"]),
        .testTarget(name: "PicturesTests", dependencies: ["Pictures", "CImageCodecs"]),
        // Archives made with libzip itself, read back through the bounded reader.
        .testTarget(name: "ZipTests", dependencies: ["Zip", "CZip"]),
        // The certificates checked with OpenSSL's verifier directly, not through the code that made them.
        .testTarget(name: "LocalCertificatesTests", dependencies: ["LocalCertificates", "COpenSSL"]),
        .testTarget(name: "TLSClientTests", dependencies: ["TLSClient"]),
        // Argon2id through libsodium, checked against libsodium's own encoded form and costs.
        .testTarget(name: "SodiumTests", dependencies: ["Sodium"]),
        // Authenticator responses made in the tests with OpenSSL's keys and libcbor's encoder, for the three
        // algorithms and every refusal.
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn", "COpenSSL", "SignatureKeysTesting"]),
        // ID tokens signed in the tests with keys OpenSSL makes there, for both algorithms and every refusal;
        // the relying party against a provider scripted in memory (its answers, its keys, a clock the test moves).
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "OpenIDConnect", "SignatureKeysTesting", "Sodium", "Locking"]),
        .testTarget(name: "SQLiteStorageTests", dependencies: ["SQLiteStorage", "StoryCircleCore", "Locking"]),
        // The loop executor, its timers, frames and HTTP types, without sockets or C.
        .testTarget(name: "TransportCoreTests", dependencies: ["TransportCore", "Locking"]),
        .testTarget(name: "WebSocketTransportTests", dependencies: ["TransportCore", "WebSocketTransport", "Locking"]),
        // The CLI's parser and terminal, in process (the executable end to end: Tests/Integration/test_cli.py).
        .testTarget(name: "StoryCircleCLITests", dependencies: ["storycircle", "StoryCircleCore"]),
        // One suite every room store passes (SQLite and PostgreSQL), and PostgreSQL's own failure tests.
        .testTarget(name: "RoomStoreTests", dependencies: ["SQLiteStorage", "PostgresStorage", "RoomStoreSupport", "StoryCircleCore", "Locking"]),
        // Rooms, routing, leases and the outbox over test doubles: no sockets, no C libraries.
        .testTarget(
            name: "StoryCircleServerTests",
            dependencies: ["StoryCircleServer", "StoryCircleServerTesting", "StoryCircleTesting", "StoryCircleCore", "TransportCore", "RoomStoreSupport", "Locking", "Sodium"]
        ),
        // The whole server: the HTTP API, real sockets, the narrator and audio cache, storage faults.
        .testTarget(
            name: "StoryCircleAppTests",
            dependencies: ["StoryCircleApp", "StoryCircleServer", "StoryCircleServerTesting", "StoryCircleTesting", "StoryCircleCore", "TransportCore", "WebSocketTransport", "WebSocketTransportTesting", "Speech", "SQLiteStorage", "Locking"]
        ),
    ]
)
