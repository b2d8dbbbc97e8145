import Synchronization

/// Counters the transport keeps, read by `/metrics`. Atomic, so any thread may read them. Here, not beside
/// the transport that counts, so that the HTTP API that reports them links no C library.
public final class TransportMetrics: Sendable {
    public struct Snapshot: Sendable, Equatable {
        public var openConnections: Int
        public var connectionsTotal: Int
        public var messagesReceived: Int
        public var messagesSent: Int
        public var bytesSent: Int
        public var protocolErrors: Int
        public var slowClientsDropped: Int
        public var rejectedUpgrades: Int
        public var rejectedPerAddress: Int
        public var helloTimeouts: Int
        public var pingsSent: Int
        public var idleHangUps: Int
        public var httpRequests: Int
        /// Bytes of request bodies read (a body refused from its head is never read).
        public var httpBodyBytes: Int
        /// Requests answered from their head alone, their body unread (`HeadAdmission.answer`).
        public var httpAnsweredAtHead: Int
        /// HTTP connections refused because their address had `maxHTTPConnectionsPerAddress` open already.
        public var httpRejectedPerAddress: Int
        /// Writes made where the service thread was woken, without a WRITEABLE callback (the one-frame path).
        public var writesAtWakeup: Int
        /// Writes made where a room on the service thread sent, nothing being queued (`writeAtSend`).
        public var writesAtSend: Int
        /// Frames that went out in a write with others (`coalesceWrites`).
        public var framesCoalesced: Int
    }

    package let openConnections = Atomic<Int>(0)
    package let connectionsTotal = Atomic<Int>(0)
    package let messagesReceived = Atomic<Int>(0)
    package let messagesSent = Atomic<Int>(0)
    package let bytesSent = Atomic<Int>(0)
    package let protocolErrors = Atomic<Int>(0)
    package let slowClientsDropped = Atomic<Int>(0)
    package let rejectedUpgrades = Atomic<Int>(0)
    /// Upgrades refused because their address had `maxConnectionsPerAddress` open already.
    package let rejectedPerAddress = Atomic<Int>(0)
    /// WebSockets closed because no hello came in time.
    package let helloTimeouts = Atomic<Int>(0)
    /// Keepalive pings sent to connections that had been silent for `pingAfterIdleSeconds`.
    package let pingsSent = Atomic<Int>(0)
    /// Connections hung up on after `hangUpAfterIdleSeconds` of silence.
    package let idleHangUps = Atomic<Int>(0)
    package let httpRequests = Atomic<Int>(0)
    package let httpBodyBytes = Atomic<Int>(0)
    package let httpAnsweredAtHead = Atomic<Int>(0)
    package let httpRejectedPerAddress = Atomic<Int>(0)
    package let writesAtWakeup = Atomic<Int>(0)
    package let writesAtSend = Atomic<Int>(0)
    package let framesCoalesced = Atomic<Int>(0)

    public init() {}

    public var snapshot: Snapshot {
        Snapshot(
            openConnections: openConnections.load(ordering: .relaxed),
            connectionsTotal: connectionsTotal.load(ordering: .relaxed),
            messagesReceived: messagesReceived.load(ordering: .relaxed),
            messagesSent: messagesSent.load(ordering: .relaxed),
            bytesSent: bytesSent.load(ordering: .relaxed),
            protocolErrors: protocolErrors.load(ordering: .relaxed),
            slowClientsDropped: slowClientsDropped.load(ordering: .relaxed),
            rejectedUpgrades: rejectedUpgrades.load(ordering: .relaxed),
            rejectedPerAddress: rejectedPerAddress.load(ordering: .relaxed),
            helloTimeouts: helloTimeouts.load(ordering: .relaxed),
            pingsSent: pingsSent.load(ordering: .relaxed),
            idleHangUps: idleHangUps.load(ordering: .relaxed),
            httpRequests: httpRequests.load(ordering: .relaxed),
            httpBodyBytes: httpBodyBytes.load(ordering: .relaxed),
            httpAnsweredAtHead: httpAnsweredAtHead.load(ordering: .relaxed),
            httpRejectedPerAddress: httpRejectedPerAddress.load(ordering: .relaxed),
            writesAtWakeup: writesAtWakeup.load(ordering: .relaxed),
            writesAtSend: writesAtSend.load(ordering: .relaxed),
            framesCoalesced: framesCoalesced.load(ordering: .relaxed)
        )
    }
}
