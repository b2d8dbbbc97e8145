/// A libwebsockets call that failed, named, with the code it returned.
public struct LWSError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var code: Int

    public var description: String { "libwebsockets: \(operation) failed (\(code))" }

    package init(operation: String, code: Int) {
        self.operation = operation
        self.code = code
    }

    /// Turns a C return code into a Swift error: lws reports failure as a negative (or, for some calls,
    /// non-zero) integer.
    @discardableResult
    static func check(_ code: Int32, _ operation: String, failsWhenNonZero: Bool = false) throws(LWSError) -> Int32 {
        if code < 0 || (failsWhenNonZero && code != 0) {
            throw LWSError(operation: operation, code: Int(code))
        }
        return code
    }

    /// A pointer an lws constructor returned, or the error for its `NULL`.
    static func check<Pointer>(_ pointer: Pointer?, _ operation: String) throws(LWSError) -> Pointer {
        guard let pointer else { throw LWSError(operation: operation, code: -1) }
        return pointer
    }
}
