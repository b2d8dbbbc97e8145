import CLame

/// An encoded clip and what a player hears of it.
public struct MP3Audio: Sendable, Equatable {
    public var bytes: [UInt8]
    /// Silence before the first sample of speech: LAME's encoder delay plus the standard 529-sample decoder
    /// delay. Without a gapless (LAME) tag, browsers play it, so timings are shifted by it.
    public var leadingDelayMs: Int
    /// How long the file plays, from its frames.
    public var durationMs: Int
}

/// 16-bit mono PCM to MP3 with LAME: about 4 KB per second of speech at 32 kbit/s, which suits classroom
/// Wi-Fi and plays in every browser.
public enum MP3Encoder {
    static let decoderDelaySamples = 529

    public static func encode(_ samples: [Int16], sampleRate: Int, kilobitsPerSecond: Int = 32) throws(SpeechError) -> MP3Audio {
        guard let lame = lame_init() else { throw .encodingFailed("lame_init") }
        defer { lame_close(lame) }
        lame_set_in_samplerate(lame, Int32(sampleRate))
        lame_set_out_samplerate(lame, Int32(sampleRate))
        lame_set_num_channels(lame, 1)
        lame_set_mode(lame, MONO)
        lame_set_brate(lame, Int32(kilobitsPerSecond))
        lame_set_quality(lame, 5)
        // No Xing/LAME tag frame: every frame is audio, so the file's length is its duration.
        lame_set_bWriteVbrTag(lame, 0)
        guard lame_init_params(lame) >= 0 else { throw .encodingFailed("lame_init_params") }

        var output = [UInt8](repeating: 0, count: samples.count * 5 / 4 + 7_200 + 8_192)
        var pcm = samples
        let written = pcm.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                lame_encode_buffer(lame, input.baseAddress, nil, Int32(input.count), out.baseAddress, Int32(out.count))
            }
        }
        guard written >= 0 else { throw .encodingFailed("lame_encode_buffer returned \(written)") }
        let flushed = output.withUnsafeMutableBufferPointer { out in
            lame_encode_flush(lame, out.baseAddress! + Int(written), Int32(out.count - Int(written)))
        }
        guard flushed >= 0 else { throw .encodingFailed("lame_encode_flush returned \(flushed)") }
        let bytes = Array(output.prefix(Int(written) + Int(flushed)))
        guard let frames = MP3Frames.scan(bytes) else { throw .encodingFailed("LAME produced frames that do not scan") }
        let delay = (Int(lame_get_encoder_delay(lame)) + decoderDelaySamples) * 1_000 / sampleRate
        return MP3Audio(bytes: bytes, leadingDelayMs: delay, durationMs: frames.durationMs)
    }
}

/// 16-bit mono PCM as a WAV file: the fallback when MP3 is not wanted.
public enum WAVEncoder {
    public static func encode(_ samples: [Int16], sampleRate: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func append(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        let dataBytes = UInt32(samples.count * 2)
        bytes += Array("RIFF".utf8); append(36 + dataBytes); bytes += Array("WAVE".utf8)
        bytes += Array("fmt ".utf8); append(UInt32(16)); append(UInt16(1)); append(UInt16(1))
        append(UInt32(sampleRate)); append(UInt32(sampleRate * 2)); append(UInt16(2)); append(UInt16(16))
        bytes += Array("data".utf8); append(dataBytes)
        for sample in samples { append(UInt16(bitPattern: sample)) }
        return bytes
    }
}
