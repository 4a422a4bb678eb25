#include "trace/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace nicsim {

std::string ps_to_us_string(Tick t) { return fmt::format("{}.{:06}", t / 1000000, t % 1000000); }

namespace {
std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20) out.push_back(c);
  }
  return out;
}
}  // namespace

Timeline::~Timeline() { close(); }

bool Timeline::open(const std::string& path, std::uint64_t max_events) {
  close();
  max_events_ = max_events;
  if (hold_only_) return true;
  out_ = std::fopen(path.c_str(), "w");
  if (!out_) return false;
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
  first_ = true;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"args\":{\"name\":\"%s\"}}", d,
                 json_escape(devices_[d]).c_str());
  }
  if (!device_order_) write_tracks_metadata();
  return true;
}

void Timeline::write_tracks_metadata() {
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
                 tracks_[i].device, tracks_[i].tid, json_escape(tracks_[i].name).c_str());
  }
}

void Timeline::close() {
  if (!out_) {
    held_.clear();
    return;
  }
  if (device_order_) write_held();
  if (dropped_) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"nicsim_dropped_events\",\"pid\":0,\"args\":{\"dropped\":%llu}}",
                 static_cast<unsigned long long>(dropped_));
  }
  std::fputs("\n]}\n", out_);
  std::fclose(out_);
  out_ = nullptr;
}

void Timeline::begin_event() {
  if (!first_) std::fputs(",\n", out_);
  first_ = false;
}

std::uint32_t Timeline::track(std::uint32_t device, std::string_view name) {
  std::uint32_t in_device = 0;
  for (const Track& t : tracks_) {
    if (t.device == device && t.name == name) return t.tid;
    if (t.device == device) ++in_device;
  }
  const auto id = device_order_ ? in_device : static_cast<std::uint32_t>(tracks_.size());
  tracks_.push_back(Track{device, std::string(name), id});
  if (out_ && !device_order_) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
                 device, id, json_escape(name).c_str());
  }
  return id;
}

void Timeline::span(std::uint32_t device, std::uint32_t track, std::string_view name, Tick start, Tick duration,
                    std::string_view args_json) {
  if (!enabled() || drops(start)) return;
  std::string line = fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":{},\"dur\":{}", device,
                                 track, json_escape(name), ps_to_us_string(start), ps_to_us_string(duration));
  if (!args_json.empty()) line += fmt::format(",\"args\":{}", args_json);
  line += "}";
  write_event(device, start, line);
}

void Timeline::instant(std::uint32_t device, std::uint32_t track, std::string_view name, Tick t,
                       std::string_view args_json) {
  if (!enabled() || drops(t)) return;
  std::string line = fmt::format("{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":{}", device,
                                 track, json_escape(name), ps_to_us_string(t));
  if (!args_json.empty()) line += fmt::format(",\"args\":{}", args_json);
  line += "}";
  write_event(device, t, line);
}

// Decided before the event is formatted. Held in device order, an event is
// dropped when at least max_events held ones come before it (all are no
// later than the latest held): no other process's events can bring it back
// among the first max_events written.
bool Timeline::drops(Tick t) {
  if (device_order_ ? held_.size() < max_events_ || t <= held_latest_ : events_ < max_events_) return false;
  ++dropped_;
  return true;
}

void Timeline::write_event(std::uint32_t device, Tick t, const std::string& line) {
  if (device_order_) {
    held_latest_ = std::max(held_latest_, t);
    if (device >= device_events_.size()) device_events_.resize(device + 1, 0);
    held_.push_back({t, std::uint64_t{device} << 40 | device_events_[device]++, line});
    return;
  }
  ++events_;
  begin_event();
  std::fwrite(line.data(), 1, line.size(), out_);
}

void Timeline::hold_in_device_order(bool write) {
  device_order_ = true;
  hold_only_ = !write;
}

// The events dropped here, the tracks, then the events.
std::string Timeline::export_held() {
  std::string out;
  auto put = [&out](std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(dropped_);
  dropped_ = 0;
  put(tracks_.size());
  for (const Track& t : tracks_) {
    put(t.device);
    put(t.tid);
    put(t.name.size());
    out += t.name;
  }
  for (const Held& h : held_) {
    put(h.t);
    put(h.seq);
    put(h.line.size());
    out += h.line;
  }
  held_.clear();
  return out;
}

void Timeline::import_held(const std::string& bytes) {
  std::size_t at = 0;
  auto get = [&]() {
    std::uint64_t v = 0;
    if (at + sizeof v <= bytes.size()) std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  };
  auto text = [&](std::uint64_t n) {
    std::string s = bytes.substr(std::min(at, bytes.size()), n);
    at += n;
    return s;
  };
  dropped_ += get();
  for (std::uint64_t n = get(); n > 0; --n) {
    const auto device = static_cast<std::uint32_t>(get());
    const auto tid = static_cast<std::uint32_t>(get());
    std::string name = text(get());
    bool known = false;
    for (const Track& t : tracks_) known = known || (t.device == device && t.name == name);
    if (!known) tracks_.push_back(Track{device, std::move(name), tid});
  }
  while (at < bytes.size()) {
    const Tick t = get();
    const std::uint64_t seq = get();
    held_.push_back({t, seq, text(get())});
  }
}

// Track names by device and id, then the events by (time, device, count),
// the first max_events of them.
void Timeline::write_held() {
  std::sort(tracks_.begin(), tracks_.end(),
            [](const Track& a, const Track& b) { return a.device != b.device ? a.device < b.device : a.tid < b.tid; });
  write_tracks_metadata();
  std::sort(held_.begin(), held_.end(),
            [](const Held& a, const Held& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; });
  for (const Held& h : held_) {
    if (events_ >= max_events_) {
      ++dropped_;
      continue;
    }
    ++events_;
    begin_event();
    std::fwrite(h.line.data(), 1, h.line.size(), out_);
  }
  held_.clear();
}

}  // namespace nicsim
