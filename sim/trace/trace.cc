#include "trace/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/calendar.h"

namespace nicsim {

namespace {
struct ComponentInfo {
  const char* name;
  const char* doc;
};
constexpr ComponentInfo kComponents[] = {
#define NICSIM_X(name, doc) {#name, doc},
    NICSIM_TRACE_COMPONENTS(NICSIM_X)
#undef NICSIM_X
};

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        else
          out.push_back(c);
    }
  }
  out.push_back('"');
}
}  // namespace

const char* component_name(Component c) { return kComponents[static_cast<int>(c)].name; }
const char* component_doc(Component c) { return kComponents[static_cast<int>(c)].doc; }

std::optional<Component> trace_component_from_name(std::string_view name) {
  for (int i = 0; i < static_cast<int>(Component::count); ++i)
    if (name == kComponents[i].name) return static_cast<Component>(i);
  return std::nullopt;
}

bool glob_match(std::string_view p, std::string_view t) {
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  auto class_match = [&](std::size_t& i, char c) {
    // [abc] or [a-z]; i points at '['; on return i is past ']'.
    std::size_t j = i + 1;
    bool negate = j < p.size() && p[j] == '!';
    if (negate) ++j;
    bool hit = false;
    for (; j < p.size() && p[j] != ']'; ++j) {
      if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
        if (c >= p[j] && c <= p[j + 2]) hit = true;
        j += 2;
      } else if (p[j] == c) {
        hit = true;
      }
    }
    i = j + 1;
    return hit != negate;
  };
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
      continue;
    }
    if (pi < p.size()) {
      std::size_t next = pi;
      bool ok;
      if (p[pi] == '[') {
        ok = class_match(next, t[ti]);
      } else {
        ok = p[pi] == '?' || p[pi] == t[ti];
        next = pi + 1;
      }
      if (ok) {
        pi = next;
        ++ti;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    pi = star + 1;
    ti = ++mark;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

Tracer::~Tracer() { close(); }

void Tracer::set_devices(std::vector<std::string> names) {
  names_ = std::move(names);
  masks_.assign(names_.size(), 0);
}

void Tracer::enable(std::string_view device_glob, std::optional<Component> component) {
  std::uint32_t bits = component ? (1u << static_cast<unsigned>(*component)) : ~0u;
  for (std::size_t d = 0; d < names_.size(); ++d)
    if (glob_match(device_glob, names_[d])) masks_[d] |= bits;
}

bool Tracer::open(const std::string& path) {
  close();
  if (hold_only_) return true;
  out_ = std::fopen(path.c_str(), "w");
  return out_ != nullptr;
}

void Tracer::close() {
  if (out_) {
    write_due(kTickMax);
    std::fclose(out_);
  }
  out_ = nullptr;
  held_.clear();
}

void Tracer::hold_in_device_order(bool write) {
  device_order_ = true;
  hold_only_ = !write;
  device_records_.assign(names_.size(), 0);
}

// (t, seq) pairs and their lines, in no particular order.
std::string Tracer::export_held() {
  std::string out;
  for (const Held& h : held_) {
    const std::uint64_t head[3] = {h.t, h.seq, h.line.size()};
    out.append(reinterpret_cast<const char*>(head), sizeof head);
    out += h.line;
  }
  held_.clear();
  return out;
}

void Tracer::import_held(const std::string& bytes) {
  std::size_t at = 0;
  while (at + 3 * sizeof(std::uint64_t) <= bytes.size()) {
    std::uint64_t head[3];
    std::memcpy(head, bytes.data() + at, sizeof head);
    at += sizeof head;
    held_.push_back({head[0], head[1], bytes.substr(at, head[2])});
    std::push_heap(held_.begin(), held_.end(), later);
    at += head[2];
  }
}

void Tracer::write_due(Tick now) {
  while (!held_.empty() && held_.front().t <= now) {
    std::pop_heap(held_.begin(), held_.end(), later);
    std::fwrite(held_.back().line.data(), 1, held_.back().line.size(), out_);
    held_.pop_back();
  }
}

void Tracer::record(Tick t, std::uint32_t device, Component c, std::string_view event,
                    std::initializer_list<TraceField> fields) {
  ++records_;
  if (!out_ && !hold_only_) return;
  line_.clear();
  fmt::format_to(std::back_inserter(line_), "{{\"t\":{},\"dev\":", t);
  append_json_string(line_, device < names_.size() ? std::string_view(names_[device]) : "?");
  fmt::format_to(std::back_inserter(line_), ",\"comp\":\"{}\",\"ev\":", component_name(c));
  append_json_string(line_, event);
  for (const TraceField& f : fields) {
    line_ += ",\"";
    line_ += f.key;
    line_ += "\":";
    switch (f.type) {
      case TraceField::Type::Int:
        fmt::format_to(std::back_inserter(line_), "{}", f.i);
        break;
      case TraceField::Type::Uint:
        fmt::format_to(std::back_inserter(line_), "{}", f.u);
        break;
      case TraceField::Type::Real:
        fmt::format_to(std::back_inserter(line_), "{}", f.d);
        break;
      case TraceField::Type::Str:
        append_json_string(line_, f.s);
        break;
    }
  }
  line_ += "}\n";
  if (device_order_) {
    // Nothing is written before close(): which block records first at a
    // time must not decide the order.
    const std::uint64_t n = device < device_records_.size() ? device_records_[device]++ : records_;
    held_.push_back({t, std::uint64_t{device} << 40 | n, line_});
    std::push_heap(held_.begin(), held_.end(), later);
    return;
  }
  const Tick now = Calendar::now();
  if (t <= now && (held_.empty() || held_.front().t > t)) {
    write_due(t);
    std::fwrite(line_.data(), 1, line_.size(), out_);
    return;
  }
  held_.push_back({t, records_, line_});
  std::push_heap(held_.begin(), held_.end(), later);
  write_due(now);
}

}  // namespace nicsim
