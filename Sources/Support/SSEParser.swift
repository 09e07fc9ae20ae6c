#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An incremental Server-Sent Events parser: feed it bytes as they arrive (split anywhere), get the `data` of each
/// complete event. Handles LF, CRLF and CR line ends, comments (`: keep-alive`), multi-line data, and fields it
/// does not need (`event:`, `id:`, `retry:`).
package struct SSEParser: Sendable {
    private var partialLine: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    /// The previous chunk ended in CR: a LF at the start of the next one belongs to it.
    private var skipLeadingLF = false

    package init() {}

    /// The data of every event completed by `bytes`.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var events: [String] = []
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return events }
        var start = 0
        let count = bytes.count
        if skipLeadingLF, count > 0, base[0] == 0x0A { start = 1 }
        skipLeadingLF = false
        var index = start
        while index < count {
            // Find the next line end quickly.
            guard let found = memchr2(base + index, count - index) else {
                partialLine.append(contentsOf: UnsafeBufferPointer(start: base + index, count: count - index))
                break
            }
            let end = found - base
            if partialLine.isEmpty {
                line(UnsafeBufferPointer(start: base + index, count: end - index), into: &events)
            } else {
                partialLine.append(contentsOf: UnsafeBufferPointer(start: base + index, count: end - index))
                let whole = partialLine
                partialLine.removeAll(keepingCapacity: true)
                whole.withUnsafeBufferPointer { line($0, into: &events) }
            }
            index = end + 1
            if base[end] == 0x0D {
                if index < count {
                    if base[index] == 0x0A { index += 1 }
                } else {
                    skipLeadingLF = true
                }
            }
        }
        return events
    }

    /// Bytes as an array (tests and small inputs).
    package mutating func feed(_ bytes: [UInt8]) -> [String] {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Call at the end of the stream: an event not followed by a blank line still counts.
    package mutating func finish() -> [String] {
        var events: [String] = []
        if !partialLine.isEmpty {
            let whole = partialLine
            partialLine.removeAll()
            whole.withUnsafeBufferPointer { line($0, into: &events) }
        }
        if hasData { events.append(takeData()) }
        return events
    }

    private mutating func takeData() -> String {
        let text = String(decoding: data, as: UTF8.self)
        data.removeAll(keepingCapacity: true)
        hasData = false
        return text
    }

    private mutating func line(_ line: UnsafeBufferPointer<UInt8>, into events: inout [String]) {
        if line.isEmpty {
            if hasData { events.append(takeData()) }
            return
        }
        if line[0] == UInt8(ascii: ":") { return }  // comment
        // "data:" with an optional single space after the colon
        guard line.count >= 5, line[0] == 0x64, line[1] == 0x61, line[2] == 0x74, line[3] == 0x61, line[4] == 0x3A
        else { return }
        var valueStart = 5
        if valueStart < line.count, line[valueStart] == 0x20 { valueStart += 1 }
        if hasData { data.append(0x0A) }
        data.append(contentsOf: UnsafeBufferPointer(rebasing: line[valueStart...]))
        hasData = true
    }
}

/// The first LF or CR in `count` bytes at `pointer`.
@inline(__always)
private func memchr2(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> UnsafePointer<UInt8>? {
    let lf = memchr(pointer, 0x0A, count).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) }
    let searchCR = lf.map { $0 - pointer } ?? count
    if searchCR > 0, let cr = memchr(pointer, 0x0D, searchCR) {
        return UnsafePointer(cr.assumingMemoryBound(to: UInt8.self))
    }
    return lf
}
