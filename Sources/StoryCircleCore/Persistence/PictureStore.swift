/// Pictures of stories, kept in the room store next to the rooms, so every node of a cluster serves them
/// and one backup keeps them. A picture is stored once, under the SHA-256 of its large rendition's bytes
/// (its id), already checked and cleaned (see the `Pictures` target): the store keeps bytes, never judges
/// them. Pictures are shared by every room and story that names them; purging rooms leaves them.
public protocol PictureStore: AnyObject, Sendable {
    /// Stores `picture` under its id; durable when this returns. Storing an id already stored changes
    /// nothing (the id is the content). Throws a `StoreFailure` when it cannot be stored.
    func storePicture(_ picture: StoredPicture) async throws
    /// The rendition of picture `id` for `size`; a picture small enough for phones has no phone
    /// rendition, and then answers its large one. nil when there is no such picture.
    func picture(id: String, size: PictureSize) async throws -> PictureRendition?
    /// Which of `ids` are stored.
    func storedPictureIDs(among ids: [String]) async throws -> Set<String>
}

public enum PictureSize: String, Sendable, CaseIterable {
    /// At most 1600 pixels on the longest side: the projector, a tablet, a laptop.
    case large
    /// At most 800 pixels on the longest side, for phones.
    case phone
}

/// One encoded size of a picture.
public struct PictureRendition: Sendable, Equatable {
    /// `image/png`, `image/jpeg` or `image/webp`.
    public var mimeType: String
    public var width: Int
    public var height: Int
    public var bytes: [UInt8]

    public init(mimeType: String, width: Int, height: Int, bytes: [UInt8]) {
        self.mimeType = mimeType
        self.width = width
        self.height = height
        self.bytes = bytes
    }
}

/// A cleaned picture as the store keeps it.
public struct StoredPicture: Sendable, Equatable {
    /// SHA-256 of `large.bytes`, lowercase hex.
    public var id: String
    public var large: PictureRendition
    public var phone: PictureRendition?
    public var createdAt: ServerTime
    /// Who uploaded it first (a picture is stored once: the same bytes again keep the first owner).
    public var owner: Owner?

    /// A picture whose id is the hash of its large rendition.
    public init(large: PictureRendition, phone: PictureRendition?, createdAt: ServerTime, owner: Owner? = nil) {
        self.id = SHA256.hex(SHA256.digest(large.bytes))
        self.large = large
        self.phone = phone
        self.createdAt = createdAt
        self.owner = owner
    }

    public var storedBytes: Int { large.bytes.count + (phone?.bytes.count ?? 0) }
}
