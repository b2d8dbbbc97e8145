import StoryCircleCore

/// Closes `store` in the background: for `defer`, which cannot await. What a test wrote it has awaited
/// already; this only ends the store's threads.
func closeAfterTest(_ store: any RoomStore) {
    Task { await store.close() }
}
