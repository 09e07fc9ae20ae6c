import SkillJSON
import SkillSDK

/// A function a plugin's record points at: its address in this process, or present in a worker's process (which
/// calls it; the host only knows the pointer was not NULL).
enum RawFunction<Address> {
    case address(Address)
    case inWorker

    /// The address, when the function is in this process.
    var address: Address? {
        guard case .address(let address) = self else { return nil }
        return address
    }
}

/// A `skill_plugin` record as the ABI's rules read it (`DescriptorValidator`): from memory in this process
/// (`init(reading:)`) or from the report of a worker that opened the plugin (`init(report:)`). Holds exactly what
/// the rules read — v1.1 fields only when `struct_size` says they exist, nothing after a header they reject.
struct RawPlugin {
    typealias FreeString = @convention(c) (UnsafeMutablePointer<CChar>?) -> Void

    /// What follows a header the rules accept (`struct_size` and the major version).
    struct Body {
        var name: String?
        var version: String?
        var description: String?
        var skillCount: UInt32
        var hasSkills: Bool
        /// Read only when `skillCount` is within the limit and `skills` is not NULL.
        var descriptors: [RawDescriptor]
        /// In this process only (typed skills free their strings with it).
        var freeString: FreeString?
        /// Since 1.1 (nil: the struct is too short to have it).
        var capabilities: UInt32?
        /// Since 1.1: up to one more entry than the rules accept (nil: no list).
        var readPaths: [String]?
        var snapshot: RawFunction<PluginSnapshot.Function>?
        /// Since 1.4 (nil: the struct is too short to have them): the views' count, and the records read (none when
        /// the count is past the limit or the array NULL).
        var viewCount: UInt32? = nil
        var views: [RawView] = []
    }

    var structSize: UInt32
    var abiMajor: UInt16
    var abiMinor: UInt16
    var body: Body?

    /// Reads the record at `pointer`, touching no byte past what its `struct_size` says exists.
    init(reading pointer: UnsafePointer<skill_plugin>) {
        // Only the v1.0 part is copied (72 bytes); a v1.0 plugin's struct ends there, and fields added since are
        // read one by one below, when `struct_size` says they exist.
        let plugin = DescriptorValidator.v1_0Part(pointer)
        structSize = plugin.struct_size
        abiMajor = plugin.abi_major
        abiMinor = plugin.abi_minor
        guard Int(structSize) >= DescriptorValidator.minimumPluginSize, abiMajor == SKILL_ABI_MAJOR else { return }
        let raw = UnsafeRawPointer(pointer)
        func field<T>(_ key: PartialKeyPath<skill_plugin>, _ type: T.Type) -> T? {
            guard let offset = MemoryLayout<skill_plugin>.offset(of: key),
                DescriptorValidator.has(structSize, offset, MemoryLayout<T>.size)
            else { return nil }
            return raw.loadUnaligned(fromByteOffset: offset, as: T.self)
        }
        var descriptors: [RawDescriptor] = []
        if plugin.skill_count > 0, plugin.skill_count <= DescriptorValidator.maximumSkills, let first = plugin.skills {
            // The array's stride is the size the plugin was compiled with (its first descriptor's struct_size),
            // not this host's sizeof: a v1.0 plugin's descriptors are 80 bytes apart.
            let stride = UnsafeRawPointer(first).loadUnaligned(as: UInt32.self)
            let count = Int(stride) >= DescriptorValidator.minimumDescriptorSize ? Int(plugin.skill_count) : 1
            for index in 0..<count {
                let descriptor = UnsafeRawPointer(first).advanced(by: index * Int(stride))
                let size = descriptor.loadUnaligned(as: UInt32.self)
                descriptors.append(
                    index > 0 && size != stride
                        ? RawDescriptor(structSize: size, fields: nil)
                        : RawDescriptor(reading: descriptor.assumingMemoryBound(to: skill_descriptor.self)))
            }
        }
        var readPaths: [String]?
        if let list = field(\skill_plugin.read_paths, UnsafePointer<UnsafePointer<CChar>?>?.self) ?? nil {
            var paths: [String] = []
            while paths.count <= DescriptorValidator.maximumReadPaths, let entry = list[paths.count] {
                paths.append(pluginString(entry))
            }
            readPaths = paths
        }
        let snapshot = field(\skill_plugin.snapshot, PluginSnapshot.Function?.self) ?? nil
        body = Body(
            name: plugin.name.map { pluginString($0) }, version: plugin.version.map { pluginString($0) },
            description: plugin.description.map { pluginString($0) }, skillCount: plugin.skill_count,
            hasSkills: plugin.skills != nil, descriptors: descriptors, freeString: plugin.free_string,
            capabilities: field(\skill_plugin.capabilities, UInt32.self), readPaths: readPaths,
            snapshot: snapshot.map { .address($0) })
        if let views = field(\skill_plugin.views, UnsafePointer<skill_view>?.self),
            let count = field(\skill_plugin.view_count, UInt32.self)
        {
            body?.viewCount = count
            if count > 0, count <= ViewValidator.maximumViews, let first = views {
                // As the descriptors: the stride is the first record's struct_size — one the rules accept
                // (`ViewValidator.isReadableSize`), else only the first record's size is read.
                let stride = UnsafeRawPointer(first).loadUnaligned(as: UInt32.self)
                let shown = ViewValidator.isReadableSize(stride) ? Int(count) : 1
                body?.views = (0..<shown).map { index in
                    let record = UnsafeRawPointer(first).advanced(by: index * Int(stride))
                    let size = record.loadUnaligned(as: UInt32.self)
                    guard ViewValidator.isReadableSize(size), index == 0 || size == stride else {
                        return RawView(structSize: size, fields: nil)
                    }
                    // Each text at most its limit and a byte (longer is refused for its length, not judged for its
                    // encoding), as the C worker reads it; one that is not UTF-8 is refused.
                    var utf8 = true
                    func text(_ pointer: UnsafePointer<CChar>?, _ limit: Int) -> String? {
                        guard let pointer else { return nil }
                        let bytes = UnsafeRawBufferPointer(start: pointer, count: strnlen(pointer, limit))
                        if bytes.count < limit, String(validating: bytes, as: UTF8.self) == nil { utf8 = false }
                        return String(decoding: bytes, as: UTF8.self)
                    }
                    // Copied byte by byte: a stride that is not a multiple of 8 leaves the record unaligned.
                    var view = skill_view()
                    withUnsafeMutableBytes(of: &view) { target in
                        target.copyMemory(
                            from: UnsafeRawBufferPointer(start: record, count: MemoryLayout<skill_view>.size))
                    }
                    return RawView(
                        structSize: size,
                        fields: RawView.Fields(
                            name: text(view.name, 256), title: text(view.title, ViewValidator.maximumTitle + 1),
                            html: text(view.html, ViewValidator.maximumPage + 1),
                            csp: text(view.csp, ViewValidator.maximumDeclaration + 1),
                            permissions: text(view.permissions, ViewValidator.maximumDeclaration + 1),
                            flags: view.flags, utf8: utf8))
                }
            }
        }
    }

    /// Reads a worker's `describe` report (`Sources/skillhost-worker/protocol.md`); nil when it is not one.
    init?(report: JSONValue) {
        guard let plugin = report["plugin"], let size = UInt32(exactly: plugin["struct_size"]),
            let major = UInt16(exactly: plugin["abi_major"]), let minor = UInt16(exactly: plugin["abi_minor"])
        else { return nil }
        structSize = size
        abiMajor = major
        abiMinor = minor
        guard Int(structSize) >= DescriptorValidator.minimumPluginSize, abiMajor == SKILL_ABI_MAJOR else { return }
        // A worker reads at most `skill_count` descriptors, and none past the limit: a longer list is forged.
        guard let count = UInt32(exactly: plugin["skill_count"]), case .bool(let hasSkills)? = plugin["skills"],
            let list = report["descriptors"]?.arrayValue, list.count <= min(count, DescriptorValidator.maximumSkills)
        else { return nil }
        var descriptors: [RawDescriptor] = []
        for item in list {
            guard let descriptor = RawDescriptor(report: item) else { return nil }
            descriptors.append(descriptor)
        }
        var readPaths: [String]?
        if let paths = plugin["read_paths"]?.arrayValue {
            readPaths = paths.compactMap(\.stringValue)
            guard readPaths?.count == paths.count else { return nil }
        }
        body = Body(
            name: plugin["name"]?.stringValue, version: plugin["version"]?.stringValue,
            description: plugin["description"]?.stringValue, skillCount: count, hasSkills: hasSkills,
            descriptors: descriptors, freeString: nil, capabilities: UInt32(exactly: plugin["capabilities"]),
            readPaths: readPaths, snapshot: plugin["snapshot"] == .bool(true) ? .inWorker : nil)
        if let viewCount = UInt32(exactly: plugin["view_count"]) {
            // At most the count, and none past the limit: a longer list is forged.
            guard let list = plugin["views"]?.arrayValue, list.count <= min(viewCount, ViewValidator.maximumViews)
            else { return nil }
            var views: [RawView] = []
            for item in list {
                guard let view = RawView(report: item) else { return nil }
                views.append(view)
            }
            body?.viewCount = viewCount
            body?.views = views
        }
    }
}

/// A `skill_descriptor` as the ABI's rules read it, like `RawPlugin`.
struct RawDescriptor {
    struct Fields {
        var id: String?
        var title: String?
        var description: String?
        var inputSchema: String?
        var risk: UInt32
        var flags: UInt32
        var timeoutMilliseconds: UInt32
        var invoke: RawFunction<skill_invoke_fn>?
        var signature: String?
        var function: RawFunction<@convention(c) () -> Void>?
        /// Since 1.1.
        var outputSchema: String?
        /// Since 1.3.
        var answer: String? = nil
        /// Since 1.4 (nil `audience`: the struct is too short to have them).
        var view: String? = nil
        var audience: UInt32? = nil
    }

    var structSize: UInt32
    /// Nil when only `struct_size` was read: it is under the minimum, or differs from the first descriptor's.
    var fields: Fields?

    init(structSize: UInt32, fields: Fields?) {
        self.structSize = structSize
        self.fields = fields
    }

    init(reading pointer: UnsafePointer<skill_descriptor>) {
        let descriptor = DescriptorValidator.v1_0Part(pointer)
        structSize = descriptor.struct_size
        guard Int(structSize) >= DescriptorValidator.minimumDescriptorSize else { return }
        var outputSchema: String?
        if let offset = MemoryLayout<skill_descriptor>.offset(of: \.output_schema),
            DescriptorValidator.has(structSize, offset),
            let text = UnsafeRawPointer(pointer).loadUnaligned(fromByteOffset: offset, as: UnsafePointer<CChar>?.self)
        {
            outputSchema = pluginString(text)
        }
        var answer: String?
        if let offset = MemoryLayout<skill_descriptor>.offset(of: \.answer),
            DescriptorValidator.has(structSize, offset),
            let text = UnsafeRawPointer(pointer).loadUnaligned(fromByteOffset: offset, as: UnsafePointer<CChar>?.self)
        {
            answer = pluginString(text)
        }
        fields = Fields(
            id: descriptor.id.map { pluginString($0) }, title: descriptor.title.map { pluginString($0) },
            description: descriptor.description.map { pluginString($0) },
            inputSchema: descriptor.input_schema.map { pluginString($0) }, risk: descriptor.risk,
            flags: descriptor.flags, timeoutMilliseconds: descriptor.timeout_ms,
            invoke: descriptor.invoke.map { .address($0) }, signature: descriptor.signature.map { pluginString($0) },
            function: descriptor.function.map { .address($0) }, outputSchema: outputSchema, answer: answer)
        if let offset = MemoryLayout<skill_descriptor>.offset(of: \.audience),
            DescriptorValidator.has(structSize, offset, MemoryLayout<UInt32>.size),
            let viewOffset = MemoryLayout<skill_descriptor>.offset(of: \.view)
        {
            let raw = UnsafeRawPointer(pointer)
            fields?.audience = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            fields?.view = raw.loadUnaligned(fromByteOffset: viewOffset, as: UnsafePointer<CChar>?.self).map {
                pluginString($0)
            }
        }
    }

    init?(report item: JSONValue) {
        guard let size = UInt32(exactly: item["struct_size"]) else { return nil }
        structSize = size
        guard item["id"] != nil else { return }  // only its size was read
        guard let risk = UInt32(exactly: item["risk"]), let flags = UInt32(exactly: item["flags"]),
            let timeout = UInt32(exactly: item["timeout_ms"]), case .bool(let invoke)? = item["invoke"],
            case .bool(let function)? = item["function"]
        else { return nil }
        fields = Fields(
            id: item["id"]?.stringValue, title: item["title"]?.stringValue,
            description: item["description"]?.stringValue, inputSchema: item["input_schema"]?.stringValue,
            risk: risk, flags: flags, timeoutMilliseconds: timeout, invoke: invoke ? .inWorker : nil,
            signature: item["signature"]?.stringValue, function: function ? .inWorker : nil,
            outputSchema: item["output_schema"]?.stringValue, answer: item["answer"]?.stringValue)
        if let audience = item["audience"] {
            guard let bits = UInt32(exactly: audience) else { return nil }
            fields?.audience = bits
            fields?.view = item["view"]?.stringValue
        }
    }
}

/// A `skill_view` (since 1.4) as the rules read it, like `RawDescriptor`.
struct RawView {
    struct Fields {
        var name: String?
        var title: String?
        var html: String?
        var csp: String?
        var permissions: String?
        var flags: UInt32
        /// False when any of its texts is not UTF-8 (refused: the readers would make different pages of it).
        var utf8 = true
    }

    var structSize: UInt32
    /// Nil when only `struct_size` was read: it is under the minimum, or differs from the first record's.
    var fields: Fields?

    init(structSize: UInt32, fields: Fields?) {
        self.structSize = structSize
        self.fields = fields
    }

    init?(report item: JSONValue) {
        guard let size = UInt32(exactly: item["struct_size"]) else { return nil }
        structSize = size
        guard item["name"] != nil else { return }
        guard let flags = UInt32(exactly: item["flags"]) else { return nil }
        fields = Fields(
            name: item["name"]?.stringValue, title: item["title"]?.stringValue, html: item["html"]?.stringValue,
            csp: item["csp"]?.stringValue, permissions: item["permissions"]?.stringValue, flags: flags,
            utf8: item["utf8"] != .bool(false))
    }
}

/// At most `limit` bytes of a plugin's string (what is longer is refused by its length, which this keeps).
func boundedPluginString(_ pointer: UnsafePointer<CChar>, _ limit: Int) -> String {
    String(decoding: UnsafeRawBufferPointer(start: pointer, count: strnlen(pointer, limit)), as: UTF8.self)
}

extension FixedWidthInteger {
    /// The integer a JSON number holds exactly; nil for anything else.
    init?(exactly value: JSONValue?) {
        switch value {
        case .int(let number)?: self.init(exactly: number)
        case .double(let number)?: self.init(exactly: number)
        default: return nil
        }
    }
}
