"""Real picture files for the picture tests, made byte by byte: good PNGs and JPEGs (Pillow encodes the
JPEG), and the bad pictures of issue 26: cut short, text named .png, an SVG, a 30,000 × 30,000 header bomb,
a JPEG carrying GPS in EXIF and XMP."""
import io
import struct
import zlib

from PIL import Image


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width=64, height=48, colour=(200, 80, 40)):
    rows = b"".join(b"\x00" + bytes(colour) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def png_bomb(width=30_000, height=30_000):
    """A few hundred bytes whose header asks for width × height pixels (3.6 GB decoded)."""
    idat = zlib.compressobj().compress(b"\x00" * 4096)  # the start of a stream, never finished
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", idat or b"\x78\x9c") + chunk(b"IEND", b""))


def exif_gps():
    """APP1 EXIF payload: IFD0 points to a GPS IFD with latitude 51° 30' N, longitude 0° 7' W."""
    def entry(tag, kind, count, value):
        return struct.pack("<HHII", tag, kind, count, value)
    gps_offset = 8 + 2 + 12 + 4
    rationals = gps_offset + 2 + 12 * 4 + 4
    tiff = b"II" + struct.pack("<HI", 42, 8)
    tiff += struct.pack("<H", 1) + entry(0x8825, 4, 1, gps_offset) + struct.pack("<I", 0)
    tiff += struct.pack("<H", 4) + entry(1, 2, 2, ord("N")) + entry(2, 5, 3, rationals) + entry(3, 2, 2, ord("W")) + entry(4, 5, 3, rationals + 24)
    tiff += struct.pack("<I", 0)
    for numerator in (51, 30, 0, 0, 7, 0):
        tiff += struct.pack("<II", numerator, 1)
    return b"Exif\x00\x00" + tiff


def jpeg_with_gps(width=320, height=240):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (30, 120, 200)).save(buffer, "JPEG", quality=90)
    plain = buffer.getvalue()

    def segment(marker, payload):
        return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload
    xmp = b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta><exif:GPSLatitude>51,30N</exif:GPSLatitude></x:xmpmeta>"
    return plain[:2] + segment(0xE1, exif_gps()) + segment(0xE1, xmp) + plain[2:]


def jpeg_many_scans(scans=600):
    """A small progressive JPEG whose first scan is repeated `scans` times: libjpeg only warns about the
    bogus progression and decodes every one of them."""
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (30, 120, 200)).save(buffer, "JPEG", quality=90, progressive=True)
    data = buffer.getvalue()
    start = data.index(b"\xff\xda")
    end = start + 2
    while True:
        end = data.index(b"\xff", end)
        if data[end + 1] != 0 and not 0xD0 <= data[end + 1] <= 0xD7:
            break
        end += 2
    return data[:end] + data[start:end] * scans + data[end:]


SVG = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><circle r="9"/></svg>'
TEXT = b"This is my dragon. It is green and it likes apples.\n"
