/// A point on a monotonic clock, in milliseconds. The service thread reads it once per callback
/// (`WebSocketServer.monotonicMilliseconds()`); tests pass numbers.
package typealias Milliseconds = Int64

/// The rules every WebSocket lives by, from the configuration, in the units `ConnectionState` counts in.
package struct ConnectionPolicy: Sendable, Equatable {
    /// The largest message accepted, in bytes.
    package var maxMessageBytes: Int
    /// The token bucket: refilled at this rate, holding at most `messageBurst` tokens; a message takes one.
    package var messagesPerSecond: Double
    package var messageBurst: Double
    /// Keepalive: ping after this much silence, hang up after this much (0: never).
    package var pingAfterIdle: Milliseconds
    package var hangUpAfterIdle: Milliseconds
    /// A connection whose first message has not come this long after it opened is refused (0: never).
    package var helloTimeout: Milliseconds
    /// What the hello timeout's refusal says, as configured.
    package var helloTimeoutSeconds: Double

    package init(maxMessageBytes: Int = 4_096, messagesPerSecond: Double = 10, messageBurst: Double = 40, pingAfterIdleSeconds: Int = 20, hangUpAfterIdleSeconds: Int = 60, helloTimeoutSeconds: Double = 10) {
        self.maxMessageBytes = maxMessageBytes
        self.messagesPerSecond = messagesPerSecond
        self.messageBurst = messageBurst
        pingAfterIdle = Milliseconds(max(0, pingAfterIdleSeconds)) * 1_000
        hangUpAfterIdle = Milliseconds(max(0, hangUpAfterIdleSeconds)) * 1_000
        // Rounded up: never a timeout before the configured time.
        helloTimeout = helloTimeoutSeconds > 0 ? Milliseconds((helloTimeoutSeconds * 1_000).rounded(.up)) : 0
        self.helloTimeoutSeconds = helloTimeoutSeconds
    }

    package init(_ configuration: WebSocketServerConfiguration) {
        self.init(
            maxMessageBytes: configuration.maxMessageBytes, messagesPerSecond: configuration.messagesPerSecond,
            messageBurst: configuration.messageBurst, pingAfterIdleSeconds: configuration.pingAfterIdleSeconds,
            hangUpAfterIdleSeconds: configuration.hangUpAfterIdleSeconds, helloTimeoutSeconds: configuration.helloTimeoutSeconds)
    }

    /// How often the keepalive sweep should call `tick(at:)` on every connection: a quarter of the shortest
    /// keepalive interval, within 100 ms–1 s, so a ping or a hang-up comes at most that much after its
    /// time. Nil when keepalive is off.
    package var keepaliveSweepInterval: Milliseconds? {
        let shortest = pingAfterIdle > 0 && hangUpAfterIdle > 0 ? min(pingAfterIdle, hangUpAfterIdle) : max(pingAfterIdle, hangUpAfterIdle)
        guard shortest > 0 else { return nil }
        return min(1_000, max(100, shortest / 4))
    }
}

/// What the shell must do after feeding an event to a `ConnectionState`.
package enum ConnectionAction: Sendable, Equatable {
    /// Nothing. For a frame: keep its bytes, the message it belongs to is not complete.
    case none
    /// A frame completed a message: hand it to the application. `endsHelloTimeout`: it is the connection's
    /// first, so its hello timer can be cancelled.
    case deliver(endsHelloTimeout: Bool)
    /// Send a keepalive ping.
    case ping
    /// Drop the connection without a close frame: the peer has not been heard from and will not read one.
    case hangUp
    /// Send the refusal, then close with its status. Input from the connection is ignored from here on.
    case refuse(TransportRefusal)
    /// Call `helloTimerFired(at:)` again at this time.
    case checkHello(at: Milliseconds)
}

/// One WebSocket's keepalive, hello timeout and flood limit, as a value: events go in with the time they
/// happened at, the actions the shell must carry out come back. Nothing here reads a clock or touches lws,
/// so every rule is tested by feeding events on a clock the test moves (`ConnectionStateTests`).
///
/// Stored in the service thread's `Connection`, where each frame updates it in place: no allocation, no
/// lock, no lookup. The policy is passed in rather than kept, so ten thousand connections carry one copy.
package struct ConnectionState: Sendable, Equatable {
    package private(set) var openedAt: Milliseconds
    /// When a frame (a message, part of one, or a pong) last came from the peer.
    package private(set) var lastSeen: Milliseconds
    /// Pinged since `lastSeen`: one ping per silence.
    package private(set) var pinged = false
    /// A complete first message has been handed to the application: the hello timeout no longer applies
    /// (the application binds the connection or refuses and closes it).
    package private(set) var greeted = false
    /// Refused, hung up on or closing: nothing more from the peer counts, and no timer acts.
    package private(set) var closing = false
    package private(set) var tokens: Double
    package private(set) var refilledAt: Milliseconds

    /// A WebSocket opened at `now`. The shell arms the hello timer for the action's time, if any.
    package static func opened(at now: Milliseconds, policy: ConnectionPolicy) -> (ConnectionState, ConnectionAction) {
        let state = ConnectionState(openedAt: now, lastSeen: now, tokens: policy.messageBurst, refilledAt: now)
        return (state, policy.helloTimeout > 0 ? .checkHello(at: now + policy.helloTimeout) : .none)
    }

    /// For a connection that is no WebSocket (HTTP): no rule applies, no event acts.
    package static let inert: ConnectionState = {
        var state = ConnectionState(openedAt: 0, lastSeen: 0, tokens: 0, refilledAt: 0)
        state.closing = true
        return state
    }()

    private init(openedAt: Milliseconds, lastSeen: Milliseconds, tokens: Double, refilledAt: Milliseconds) {
        self.openedAt = openedAt
        self.lastSeen = lastSeen
        self.tokens = tokens
        self.refilledAt = refilledAt
    }

    /// A data frame came. `messageBytes`: the message's size so far with this frame and what lws says is
    /// still to come of it; `completesMessage`: this frame ends the message. Answers `.none` (keep the
    /// bytes and wait), `.deliver` or `.refuse`.
    package mutating func frameReceived(at now: Milliseconds, isBinary: Bool, messageBytes: Int, completesMessage: Bool, policy: ConnectionPolicy) -> ConnectionAction {
        guard !closing else { return .none }
        seen(at: now)
        if isBinary { return refuse(.binaryNotSupported) }
        if messageBytes > policy.maxMessageBytes { return refuse(.messageTooBig(limit: policy.maxMessageBytes)) }
        guard completesMessage else { return .none }
        guard takeToken(at: now, policy: policy) else { return refuse(.tooManyMessages) }
        if greeted { return .deliver(endsHelloTimeout: false) }
        greeted = true
        return .deliver(endsHelloTimeout: policy.helloTimeout > 0)
    }

    /// A pong came: the peer is alive.
    package mutating func pongReceived(at now: Milliseconds) {
        guard !closing else { return }
        seen(at: now)
    }

    /// The keepalive sweep, at `now`: `.hangUp` after `hangUpAfterIdle` of silence, else one `.ping` after
    /// `pingAfterIdle`, else `.none`.
    package mutating func tick(at now: Milliseconds, policy: ConnectionPolicy) -> ConnectionAction {
        guard !closing else { return .none }
        let idle = now > lastSeen ? now - lastSeen : 0
        if policy.hangUpAfterIdle > 0, idle >= policy.hangUpAfterIdle {
            closing = true
            return .hangUp
        }
        if policy.pingAfterIdle > 0, idle >= policy.pingAfterIdle, !pinged {
            pinged = true
            return .ping
        }
        return .none
    }

    /// The hello timer, at `now`: the refusal if no first message came in time (a connection that answers
    /// pings but never says who it is would otherwise hold its place for ever), `.checkHello` if the timer
    /// came early, else `.none`.
    package mutating func helloTimerFired(at now: Milliseconds, policy: ConnectionPolicy) -> ConnectionAction {
        guard !greeted, !closing, policy.helloTimeout > 0 else { return .none }
        let deadline = openedAt + policy.helloTimeout
        guard now >= deadline else { return .checkHello(at: deadline) }
        return refuse(.helloTimeout(seconds: policy.helloTimeoutSeconds))
    }

    /// The shell closes the connection for a reason of its own (a protocol error, its close frame sent):
    /// from here on it is as if refused.
    package mutating func close() {
        closing = true
    }

    private mutating func seen(at now: Milliseconds) {
        lastSeen = now
        pinged = false
    }

    private mutating func refuse(_ refusal: TransportRefusal) -> ConnectionAction {
        closing = true
        return .refuse(refusal)
    }

    private mutating func takeToken(at now: Milliseconds, policy: ConnectionPolicy) -> Bool {
        let elapsed = Double(now > refilledAt ? now - refilledAt : 0) / 1_000
        refilledAt = now
        tokens = min(policy.messageBurst, tokens + elapsed * policy.messagesPerSecond)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
