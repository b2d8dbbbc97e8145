extension QRCode {
    /// An SVG drawing with a quiet zone of `border` modules: crisp at any size on a projector.
    public func svg(border: Int = 4) -> String {
        let side = size + border * 2
        var path = ""
        for y in 0..<size {
            for x in 0..<size where modules[y][x] {
                path += "M\(x + border),\(y + border)h1v1h-1z"
            }
        }
        return """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges" role="img" aria-label="QR code">\
        <rect width="100%" height="100%" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
        """
    }

    /// The code drawn with half-block characters, two module rows per line, for a terminal: dark text on
    /// a light background is not assumed, so light modules are drawn and dark ones left blank.
    public func terminalText(border: Int = 2) -> String {
        let side = size + border * 2
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - border, y - border)
            return (0..<size).contains(mx) && (0..<size).contains(my) && modules[my][mx]
        }
        var lines: [String] = []
        for y in stride(from: 0, to: side, by: 2) {
            var line = ""
            for x in 0..<side {
                let top = !dark(x, y), bottom = y + 1 < side ? !dark(x, y + 1) : false
                line += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " "
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// A portable bitmap (PBM, P1) with each module `scale` pixels square, for tests and tools.
    public func portableBitmap(scale: Int = 4, border: Int = 4) -> String {
        let side = (size + border * 2) * scale
        var rows: [String] = ["P1", "\(side) \(side)"]
        for y in 0..<side {
            let my = y / scale - border
            var row = ""
            row.reserveCapacity(side * 2)
            for x in 0..<side {
                let mx = x / scale - border
                let isDark = (0..<size).contains(mx) && (0..<size).contains(my) && modules[my][mx]
                row += isDark ? "1 " : "0 "
            }
            rows.append(row)
        }
        return rows.joined(separator: "\n") + "\n"
    }
}
