import Foundation

/// `127.0.0.1:port` as a socket address.
func loopbackAddress(port: Int = 0) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
}

/// A TCP connection to 127.0.0.1:`port` (TCP_NODELAY set), or nil when it is refused. The caller closes it.
package func connectLoopback(port: Int) -> Int32? {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return nil }
    var address = loopbackAddress(port: port)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else {
        close(socket)
        return nil
    }
    var one: Int32 = 1
    setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    return socket
}

/// Sends `request` as it is on a new connection to 127.0.0.1:`port` and reads until the server closes it (each read
/// capped at 60 s, so a server that never answers fails the test instead of hanging it); returns the bytes read.
/// Blocks: call it off the cooperative pool.
package func rawExchange(port: Int, _ request: String) throws -> [UInt8] {
    guard let descriptor = connectLoopback(port: port) else { throw POSIXError(.ECONNREFUSED) }
    defer { close(descriptor) }
    var cap = timeval(tv_sec: 60, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &cap, socklen_t(MemoryLayout<timeval>.size))
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        answer += buffer[0..<count]
    }
    return answer
}

/// A free TCP port on 127.0.0.1 (bound, read, released: a port another process could take meanwhile, which the
/// caller's server would then report as a failure to listen).
package enum LoopbackPort {
    package static func free() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw FixtureError.compileFailed("socket: \(errno)") }
        defer { close(socket) }
        var address = loopbackAddress()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw FixtureError.compileFailed("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// nginx (Debian's package) as a reverse proxy with its own configuration, pid file and logs in a folder; the
/// access log holds one line per request: the upstream that answered it.
package final class Nginx: Sendable {
    private let process: Process

    private init(process: Process) { self.process = process }

    package static func start(in folder: String, port: Int, upstreams: [Int], location: String) async throws -> Nginx {
        let root = folder + "/nginx"
        for sub in ["", "/body", "/proxy", "/fastcgi", "/uwsgi", "/scgi"] {
            try FileManager.default.createDirectory(atPath: root + sub, withIntermediateDirectories: true)
        }
        let servers = upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n")
        let configuration = """
            daemon off;
            pid \(root)/nginx.pid;
            error_log \(root)/error.log warn;
            worker_processes 1;
            events { worker_connections 1024; }
            http {
                log_format upstream '$upstream_addr';
                access_log \(root)/access.log upstream;
                client_body_temp_path \(root)/body;
                proxy_temp_path \(root)/proxy;
                fastcgi_temp_path \(root)/fastcgi;
                uwsgi_temp_path \(root)/uwsgi;
                scgi_temp_path \(root)/scgi;
                upstream skillhost {
            \(servers)
                    keepalive 32;
                }
                server {
                    listen 127.0.0.1:\(port);
                    location \(location) {
                        proxy_pass http://skillhost;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header Host localhost;
                        proxy_buffering off;
                        proxy_read_timeout 3600s;
                    }
                }
            }
            """
        try configuration.write(toFile: root + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", root, "-c", root + "/nginx.conf", "-e", root + "/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try launch(process)
        let nginx = Nginx(process: process)
        // Ready once it accepts connections (a generous cap, not a timing).
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if Self.accepts(port) { return nginx }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let errors = (try? String(contentsOfFile: root + "/error.log", encoding: .utf8)) ?? ""
        process.terminate()
        throw FixtureError.compileFailed("nginx did not start: \(errors)")
    }

    private static func accepts(_ port: Int) -> Bool {
        guard let socket = connectLoopback(port: port) else { return false }
        close(socket)
        return true
    }

    /// Stops nginx (SIGTERM) and waits for it, off the cooperative pool.
    package func stop() async { await terminateAndWait(process) }
}
