import Foundation
import StoryCircleCore

/// Rooms leaving this node because of their leases: lost, idle, or wanted by another node. The lease book
/// (`LeaseKeeper`) decides; these carry its decisions out.
extension RoomLifecycle {
    /// Stops a room whose lease is gone: its connections are told to try again (1012), which brings them to
    /// whichever node holds the room now.
    func drop(_ lease: RoomLease, because why: String) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else { return }
        if await remove(lease.room, room, .moved, releasing: false) {
            services.metrics.roomLeaseLost()
            logger.warning("Room stopped: its lease is lost", ["room.code": lease.room, "lease.epoch": String(lease.epoch), "why": why])
        }
    }

    /// Lets go of a room nobody is connected to, so the node the proxy sends it to can take it.
    func releaseIdle(_ lease: RoomLease) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else { return }
        if await remove(lease.room, room, .moved) {
            logger.info("Room released after a while with nobody connected", ["room.code": lease.room])
        }
    }

    /// Hands a room to the node that asked for it: the room leaves the map at once (so hellos for it are
    /// told to try again), finishes what it already took (its inbox, then its outbox, so every
    /// acknowledgement goes out and everything acknowledged is stored; what its connections send from now
    /// on is dropped, unacknowledged), then the lease is released and only then are the connections closed
    /// with 1012, so they reconnect (through the proxy, to the node that wants the room) when that node can
    /// take it at once. Owned: `shutDown` waits for it.
    func handOver(_ lease: RoomLease, to wanter: String) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else {
            // Let go meanwhile (its lease released with it): nothing to hand over, and the code is free.
            await keeper?.abandonHandOver(lease)
            return
        }
        rooms[lease.room] = nil
        let run = runs.removeValue(forKey: lease.room)
        let (keeper, bindings, refusals, logger) = (keeper, services.bindings, refusals, logger)
        tasks.spawn {
            let started = ContinuousClock.now
            await room.shutDown()
            // The inbox ends after what it already holds: those messages are decided (and their records
            // issued) before the wait, so their acknowledgements go out under the lease too.
            await run?.value
            let stored = await room.waitUntilStored()
            await room.stopOutbox()
            await keeper?.handedOver(lease)
            let open = bindings.unbindAll(of: room)
            refusals.refuse(open, .moved)
            logger.notice("Room handed over to the node that asked for it", [
                "room.code": lease.room, "lease.epoch": String(lease.epoch), "node.wanting": wanter,
                "connections": String(open.count), "records.stored": String(stored), "duration.ms": String((ContinuousClock.now - started).leaseMilliseconds),
            ])
        }
    }

    /// Who is connected to each room, for letting idle rooms go.
    func occupancy() async -> [String: Bool] {
        var connected: [String: Bool] = [:]
        for (code, room) in rooms { connected[code] = await room.connectionCount > 0 }
        return connected
    }

    /// Carries out what the lease book decided, each as a task of its own: a room may take a while to stop
    /// (its narration, its outbox), and must not hold up the others or the next renewal.
    func carryOut(_ actions: [LeaseBook.Action]) {
        for action in actions {
            tasks.spawn { [self] in
                switch action {
                case .drop(let lease, let why): await drop(lease, because: why)
                case .handOver(let lease, let wanter): await handOver(lease, to: wanter)
                case .releaseIdle(let lease): await releaseIdle(lease)
                }
            }
        }
    }
}
