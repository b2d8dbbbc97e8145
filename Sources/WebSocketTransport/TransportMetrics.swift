import Synchronization

/// Counters the transport keeps, read by `/metrics`. Atomic, so any thread may read them.
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
        /// Writes made where the service thread was woken, without a WRITEABLE callback (the one-frame path).
        public var writesAtWakeup: Int
        /// Writes made where a room on the service thread sent, nothing being queued (`writeAtSend`).
        public var writesAtSend: Int
        /// Frames that went out in a write with others (`coalesceWrites`).
        public var framesCoalesced: Int
    }

    let openConnections = Atomic<Int>(0)
    let connectionsTotal = Atomic<Int>(0)
    let messagesReceived = Atomic<Int>(0)
    let messagesSent = Atomic<Int>(0)
    let bytesSent = Atomic<Int>(0)
    let protocolErrors = Atomic<Int>(0)
    let slowClientsDropped = Atomic<Int>(0)
    let rejectedUpgrades = Atomic<Int>(0)
    /// Upgrades refused because their address had `maxConnectionsPerAddress` open already.
    let rejectedPerAddress = Atomic<Int>(0)
    /// WebSockets closed because no hello came in time.
    let helloTimeouts = Atomic<Int>(0)
    /// Keepalive pings sent to connections that had been silent for `pingAfterIdleSeconds`.
    let pingsSent = Atomic<Int>(0)
    /// Connections hung up on after `hangUpAfterIdleSeconds` of silence.
    let idleHangUps = Atomic<Int>(0)
    let httpRequests = Atomic<Int>(0)
    let writesAtWakeup = Atomic<Int>(0)
    let writesAtSend = Atomic<Int>(0)
    let framesCoalesced = Atomic<Int>(0)

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
            writesAtWakeup: writesAtWakeup.load(ordering: .relaxed),
            writesAtSend: writesAtSend.load(ordering: .relaxed),
            framesCoalesced: framesCoalesced.load(ordering: .relaxed)
        )
    }
}
