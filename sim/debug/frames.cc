#include "debug/frames.h"

namespace nicsim::debug {

std::string frame(const google::protobuf::MessageLite& message) {
  const std::string body = message.SerializeAsString();
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string out(4, '\0');
  out[0] = static_cast<char>(n >> 24);
  out[1] = static_cast<char>(n >> 16);
  out[2] = static_cast<char>(n >> 8);
  out[3] = static_cast<char>(n);
  return out + body;
}

FrameDecoder::Status FrameDecoder::next(google::protobuf::MessageLite& out, std::string& error) {
  if (buffer_.size() < 4) return Status::NeedMore;
  const auto* b = reinterpret_cast<const unsigned char*>(buffer_.data());
  const std::uint32_t n = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  if (n > kMaxFrame) {
    error = "frame of " + std::to_string(n) + " bytes: at most " + std::to_string(kMaxFrame);
    buffer_.clear();
    return Status::Oversized;
  }
  if (buffer_.size() < 4 + std::size_t{n}) return Status::NeedMore;
  const bool parsed = out.ParseFromArray(buffer_.data() + 4, static_cast<int>(n));
  buffer_.erase(0, 4 + std::size_t{n});
  if (!parsed) {
    error = "frame of " + std::to_string(n) + " bytes is not a " + out.GetTypeName();
    return Status::Malformed;
  }
  return Status::Message;
}

std::optional<std::string> RequestOrder::check(const wire::Request& r) {
  if (r.seq() != last_seq_ + 1)
    return "request " + std::to_string(r.seq()) + " out of order: expected " + std::to_string(last_seq_ + 1);
  if (!greeted_ && !r.has_hello()) return "the first request must be a hello with the session token";
  if (r.has_hello()) {
    if (greeted_) return "hello again: this connection has greeted already";
    if (r.hello().token() != token_) return "wrong session token";
    greeted_ = true;
  } else if (!r.has_command()) {
    return "a request with neither a hello nor a command";
  }
  last_seq_ = r.seq();
  return std::nullopt;
}

}  // namespace nicsim::debug
