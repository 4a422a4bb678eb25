#include "trace/timeline.h"

#include <fmt/format.h>

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
  out_ = std::fopen(path.c_str(), "w");
  if (!out_) return false;
  max_events_ = max_events;
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
  first_ = true;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"args\":{\"name\":\"%s\"}}", d,
                 json_escape(devices_[d]).c_str());
  }
  write_tracks_metadata();
  return true;
}

void Timeline::write_tracks_metadata() {
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%zu,\"args\":{\"name\":\"%s\"}}",
                 tracks_[i].device, i, json_escape(tracks_[i].name).c_str());
  }
}

void Timeline::close() {
  if (!out_) return;
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
  for (std::size_t i = 0; i < tracks_.size(); ++i)
    if (tracks_[i].device == device && tracks_[i].name == name) return static_cast<std::uint32_t>(i);
  tracks_.push_back(Track{device, std::string(name)});
  auto id = static_cast<std::uint32_t>(tracks_.size() - 1);
  if (out_) {
    begin_event();
    std::fprintf(out_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
                 device, id, json_escape(name).c_str());
  }
  return id;
}

void Timeline::span(std::uint32_t device, std::uint32_t track, std::string_view name, Tick start, Tick duration,
                    std::string_view args_json) {
  if (!out_) return;
  if (events_ >= max_events_) {
    ++dropped_;
    return;
  }
  ++events_;
  begin_event();
  std::string line = fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":{},\"dur\":{}", device,
                                 track, json_escape(name), ps_to_us_string(start), ps_to_us_string(duration));
  if (!args_json.empty()) line += fmt::format(",\"args\":{}", args_json);
  line += "}";
  std::fwrite(line.data(), 1, line.size(), out_);
}

void Timeline::instant(std::uint32_t device, std::uint32_t track, std::string_view name, Tick t,
                       std::string_view args_json) {
  if (!out_) return;
  if (events_ >= max_events_) {
    ++dropped_;
    return;
  }
  ++events_;
  begin_event();
  std::string line = fmt::format("{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":{}", device,
                                 track, json_escape(name), ps_to_us_string(t));
  if (!args_json.empty()) line += fmt::format(",\"args\":{}", args_json);
  line += "}";
  std::fwrite(line.data(), 1, line.size(), out_);
}

}  // namespace nicsim
