import StoryCircleCore
import StoryCircleServer
import TransportCore

/// `GET /audio/<key>.mp3`: the narration's sentences, for anyone who has the link (`AudioCache+HTTP`).
struct AudioRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.get, "/audio/:file", .none) { api, request in
                guard let audio = api.audio else { throw HTTPError.notFound }
                return audio.response(for: request[parameter: "file"], ifNoneMatch: request.http.headers["if-none-match"])
            },
        ]
    }
}
