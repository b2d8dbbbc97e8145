/// Reads an MP3 file's frame headers: enough to check a file is well formed and to know its duration
/// without decoding it.
public struct MP3Frames: Sendable, Equatable {
    public var frameCount: Int
    public var sampleRate: Int
    public var samplesPerFrame: Int

    public var durationMs: Int {
        sampleRate == 0 ? 0 : frameCount * samplesPerFrame * 1_000 / sampleRate
    }

    private static let bitratesMPEG1: [Int] = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    private static let bitratesMPEG2: [Int] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]

    /// Walks every frame of a Layer III file; `nil` if any header is invalid or the frames do not cover
    /// the file exactly.
    public static func scan(_ bytes: [UInt8]) -> MP3Frames? {
        var index = 0
        if bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 {
            let size = (Int(bytes[6]) << 21) | (Int(bytes[7]) << 14) | (Int(bytes[8]) << 7) | Int(bytes[9])
            index = 10 + size
        }
        var frames = 0
        var sampleRate = 0
        var samplesPerFrame = 0
        while index + 4 <= bytes.count {
            let header = bytes[index..<(index + 4)].map(Int.init)
            guard header[0] == 0xFF, header[1] & 0xE0 == 0xE0 else { return nil }
            let versionBits = (header[1] >> 3) & 0b11
            let layerBits = (header[1] >> 1) & 0b11
            let bitrateIndex = header[2] >> 4
            let rateIndex = (header[2] >> 2) & 0b11
            let padding = (header[2] >> 1) & 1
            guard layerBits == 0b01, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3, versionBits != 0b01 else { return nil }
            let mpeg1 = versionBits == 0b11
            let baseRates = [44_100, 48_000, 32_000]
            let rate = baseRates[rateIndex] / (mpeg1 ? 1 : versionBits == 0b10 ? 2 : 4)
            let bitrate = (mpeg1 ? bitratesMPEG1 : bitratesMPEG2)[bitrateIndex] * 1_000
            let perFrame = mpeg1 ? 1_152 : 576
            let length = perFrame / 8 * bitrate / rate + padding
            guard length > 4 else { return nil }
            if frames > 0, rate != sampleRate { return nil }
            sampleRate = rate
            samplesPerFrame = perFrame
            frames += 1
            index += length
        }
        guard frames > 0, index == bytes.count else { return nil }
        return MP3Frames(frameCount: frames, sampleRate: sampleRate, samplesPerFrame: samplesPerFrame)
    }
}
