/// What the application decides about an HTTP request from its head alone (method, path, query, headers;
/// the body is empty), before the transport reads any of its body: read a body of at most `bodyLimit`
/// bytes and hand the request on, or answer at once and read none of it (the connection then closes, so
/// a client that sends its body anyway is not read).
///
/// The transport asks on its service thread, inside libwebsockets' callback: the decision must be quick and
/// must not block (a hash compared, a MAC checked, a counter taken), never a store read or a wait.
public enum HeadAdmission: Sendable, Equatable {
    case read(bodyLimit: Int)
    case answer(HTTPResponse)
}
