import Foundation
import StoryCircleApp
import StoryCircleCore

/// `room create` with a picture story: each picture file goes to `POST /api/pictures` (the server
/// checks, cleans and stores it), and the room is created from the story naming them by id.
enum PictureUpload {
    static func upload(_ story: Story, storyPath: String, api: APIClient, token: String) async throws -> Story {
        guard !story.pictureReferences.isEmpty else { return story }
        struct Uploaded: Decodable {
            struct Size: Decodable { var bytes: Int }
            var id: String
            var bytes: Int
            var phone: Size?
        }
        do {
            return try await StoryPictures.storing(story, storyPath: storyPath) { bytes in
                let response: APIClient.Response
                do {
                    response = try await api.send("POST", "/api/pictures", token: token, json: Data(bytes), contentType: "application/octet-stream")
                } catch {
                    throw StoryPictures.StoryPictureFailure(description: (error as? CommandFailure)?.message ?? "\(error)")
                }
                let uploaded = try JSONDecoder().decode(Uploaded.self, from: response.body)
                return (uploaded.id, uploaded.bytes + (uploaded.phone?.bytes ?? 0))
            }
        } catch let failure as StoryPictures.StoryPictureFailure {
            throw CommandFailure("\(storyPath): \(failure.description)")
        }
    }
}
