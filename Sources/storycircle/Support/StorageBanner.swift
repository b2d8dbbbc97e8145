import StoryCircleCore

/// The `start` command's word on storage: one line when writes begin to fail, one when they work again.
struct StorageBanner {
    private var shown = StoreHealth.ok

    /// The line to print for `health`, if it is news.
    mutating func update(_ health: StoreHealth) -> String? {
        guard health.isOK != shown.isOK else { return nil }
        shown = health
        switch health {
        case .ok:
            return "✓ Storage works again: answers are being saved."
        case .failing(_, let reason):
            return "⚠ Results cannot be saved: \(reason). Answers are not confirmed; children will be asked to tap again. Free some disk space: the room carries on by itself."
        }
    }
}
