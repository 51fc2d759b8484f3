import CALSA
import Glibc

/// A PCM device as `carillon ports` lists it.
public struct PCMDeviceInfo: Hashable, Sendable, CustomStringConvertible {
    /// The name to pass as `-d`: `hw:0,0`, `default`, `plughw:CARD=Loopback,DEV=0`…
    public var name: String
    public var summary: String

    public init(name: String, summary: String) { self.name = name; self.summary = summary }

    public var description: String { summary.isEmpty ? name : "\(name)  \(summary)" }
}

extension PCMPlayback {
    /// Playback devices: each card's hardware PCM devices (`hw:CARD,DEV`),
    /// then the configured names ALSA's hints offer (`default`, `plughw:…`).
    public static func devices() -> [PCMDeviceInfo] {
        hardwareDevices() + hintedDevices()
    }

    /// One entry per playback subdevice-0 PCM of each card, from the control interface.
    public static func hardwareDevices() -> [PCMDeviceInfo] {
        var out: [PCMDeviceInfo] = []
        var card: Int32 = -1
        while snd_card_next(&card) >= 0, card >= 0 {
            var ctl: OpaquePointer?
            guard snd_ctl_open(&ctl, "hw:\(card)", 0) >= 0, let ctl else { continue }
            defer { snd_ctl_close(ctl) }
            var cardInfo: OpaquePointer?
            guard snd_ctl_card_info_malloc(&cardInfo) >= 0 else { continue }
            defer { snd_ctl_card_info_free(cardInfo) }
            guard snd_ctl_card_info(ctl, cardInfo) >= 0 else { continue }
            let cardID = String(cString: snd_ctl_card_info_get_id(cardInfo))
            let cardName = String(cString: snd_ctl_card_info_get_name(cardInfo))
            var pcmInfo: OpaquePointer?
            guard snd_pcm_info_malloc(&pcmInfo) >= 0 else { continue }
            defer { snd_pcm_info_free(pcmInfo) }
            var device: Int32 = -1
            while snd_ctl_pcm_next_device(ctl, &device) >= 0, device >= 0 {
                snd_pcm_info_set_device(pcmInfo, UInt32(device))
                snd_pcm_info_set_subdevice(pcmInfo, 0)
                snd_pcm_info_set_stream(pcmInfo, SND_PCM_STREAM_PLAYBACK)
                guard snd_ctl_pcm_info(ctl, pcmInfo) >= 0 else { continue }  // capture-only device
                let pcmName = String(cString: snd_pcm_info_get_name(pcmInfo))
                let subdevices = snd_pcm_info_get_subdevices_count(pcmInfo)
                out.append(PCMDeviceInfo(name: "hw:\(cardID),\(device)",
                    summary: "card \(card) '\(cardName)', device \(device) '\(pcmName)', \(subdevices) subdevice(s)"))
            }
        }
        return out
    }

    /// The playback-capable names of `snd_device_name_hint` (plugins and aliases).
    public static func hintedDevices() -> [PCMDeviceInfo] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        func hint(_ h: UnsafeMutableRawPointer, _ id: String) -> String? {
            guard let c = snd_device_name_get_hint(h, id) else { return nil }
            defer { free(c) }
            return String(cString: c)
        }
        var out: [PCMDeviceInfo] = []
        var i = 0
        while let h = hints[i] {
            i += 1
            guard let name = hint(h, "NAME") else { continue }
            if let io = hint(h, "IOID"), io != "Output" { continue }
            let desc = (hint(h, "DESC") ?? "").split(separator: "\n").joined(separator: " — ")
            out.append(PCMDeviceInfo(name: name, summary: desc))
        }
        return out
    }
}
