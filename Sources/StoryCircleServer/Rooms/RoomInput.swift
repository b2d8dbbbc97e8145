import StoryCircleCore
import TransportCore

/// What reaches a room, in arrival order, through its inbox (`RoomInbox`).
public enum RoomInput: Sendable {
    case hello(ConnectionID, Hello, peer: String)
    /// A raw text frame after the hello; the room decodes it, so decoding is spread across rooms.
    case message(ConnectionID, [UInt8])
    case disconnected(ConnectionID)
    /// From the room's own narration and timer tasks, stamped with the room's generation: after a rebuild,
    /// what the previous generation's tasks still deliver is dropped.
    case narration(NarrationUpdate, generation: Int)
    case timer(RoomTimer, generation: Int)
    /// The server's storage began failing (why, for the teacher) or works again (`nil`).
    case storeHealth(problem: String?)
    /// The outbox gave up storing the room's records: the room rebuilds itself from the store.
    case storageGaveUp(StoreFailure)
    /// What the store holds of the room, read back for a rebuild (`nil`: it could not be read).
    case readBack(RoomArchive?, after: StoreFailure)
    /// The store refused a record for the room's lease: another node may hold the room now.
    case leaseLost
    /// The room's class was saved (`followClass`), kept in order while the room reads itself back.
    case classChanged(ClassRoster)
}

/// What a room tells whoever keeps it, when it cannot go on by itself.
enum RoomNotice: Sendable {
    /// Its lease is gone: its connections must be told to try again (1012, so the pages reconnect and reach
    /// the room's new node) and it must be forgotten here.
    case leaseLost(Room)
    /// It can neither store its records nor read them back: forget it until someone asks again (its
    /// connections are closed 1013, try again later).
    case unreadable(Room)
}
