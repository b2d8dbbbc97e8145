import Testing
import TransportCore

@Suite("HTTP types")
struct HTTPTypesTests {
    @Test func aStatusIsItsCodeWithAName() {
        let literal: HTTPStatus = 404
        #expect(literal == .notFound && literal.code == 404 && "\(literal)" == "404")
        #expect(HTTPStatus(503).reasonPhrase == "Service Unavailable")
        #expect(HTTPStatus(418).reasonPhrase == "Error", "a code with no phrase of ours still makes a status line")
        #expect(HTTPStatus.created.isSuccess && !HTTPStatus.notModified.isSuccess)
        #expect(HTTPStatus.badRequest < .internalServerError)
    }

    @Test func methodsAreWrittenAsOnTheWireAndOnlySomeCarryABody() {
        #expect(HTTPMethod(rawValue: "DELETE") == .delete && HTTPMethod(rawValue: "delete") == nil)
        #expect(HTTPMethod.allCases.map(\.description) == ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
        #expect(HTTPMethod.allCases.filter(\.hasBody) == [.post, .put, .patch])
    }

    @Test func responsesCompareHeadersInOrderAndFindThemByAnyCase() {
        let response = HTTPResponse(status: .methodNotAllowed, contentType: "application/json", headers: [("Allow", "GET, HEAD")])
        #expect(response.header("allow") == "GET, HEAD")
        #expect(response == HTTPResponse(status: 405, contentType: "application/json", headers: [("Allow", "GET, HEAD")]))
        #expect(response != HTTPResponse(status: 405, contentType: "application/json"))
    }
}
