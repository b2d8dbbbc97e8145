extension Optional {
    /// `map` for a transform that awaits: nil stays nil.
    public func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
