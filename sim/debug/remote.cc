// The debugger served over TCP (nicsim debug --listen) and its client
// (nicsim attach): Boost.Asio, frames of sim/proto/debug.proto.
#include "debug/remote.h"

#include <utility>  // before boost (Boost 1.74 with C++20)

#include <boost/asio.hpp>
#include <fmt/format.h>
#include <google/protobuf/stubs/logging.h>

#include <array>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <set>

#include "debug/frames.h"

namespace nicsim::debug {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;

// Commands a client that does not control the session may run.
bool read_only(const std::string& line) {
  static const std::set<std::string> kLooking = {"help",    "where",   "list",    "show",
                                                 "history", "packets", "threads", "breakpoints"};
  const std::string word = line.substr(0, line.find(' '));
  return kLooking.count(word) > 0;
}

std::string new_token() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

wire::Stop to_wire(const Stop& s) {
  wire::Stop w;
  w.set_position(s.position.str());
  w.set_time_ps(s.time);
  w.set_reason(s.reason);
  return w;
}

class Server;

class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(Server& server, tcp::socket socket, const std::string& token)
      : server_(server), socket_(std::move(socket)), order_(token) {}
  void start() { read(); }
  void send(const wire::ServerMessage& m);
  bool controlling = false;
  bool open = true;

 private:
  void read();
  void on_request(const wire::Request& r);
  void reply(std::uint64_t seq, bool ok, const std::string& text);
  void close();
  Server& server_;
  tcp::socket socket_;
  RequestOrder order_;
  FrameDecoder decoder_;
  std::array<char, 4096> buf_{};
};

class Server {
 public:
  Server(asio::io_context& io, tcp::endpoint at, Session& session)
      : io_(io), acceptor_(io, at), session_(session), token_(new_token()) {}
  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }
  const std::string& token() const { return token_; }
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket s) {
      if (!ec) {
        auto c = std::make_shared<Client>(*this, std::move(s), token_);
        clients_.insert(c);
        c->start();
      }
      if (!quit_) accept();
    });
  }
  bool take_control(Client& c) {
    if (controller_ && controller_ != &c) return false;
    controller_ = &c;
    c.controlling = true;
    return true;
  }
  void gone(const std::shared_ptr<Client>& c) {
    if (controller_ == c.get()) controller_ = nullptr;  // the run stays paused
    clients_.erase(c);
  }
  SessionReply command(Client& from, const std::string& line) {
    SessionReply r = session_.command(line);
    if (r.stopped) {
      wire::ServerMessage m;
      *m.mutable_event()->mutable_stop() = to_wire(session_.stop());
      m.mutable_event()->set_text(r.text);
      for (const auto& c : clients_)
        if (c.get() != &from) c->send(m);
    }
    if (r.quit) {
      quit_ = true;
      acceptor_.close();
      io_.stop();
    }
    return r;
  }
  const Stop& stop() const { return session_.stop(); }

 private:
  asio::io_context& io_;
  tcp::acceptor acceptor_;
  Session& session_;
  std::string token_;
  std::set<std::shared_ptr<Client>> clients_;
  Client* controller_ = nullptr;
  bool quit_ = false;
};

void Client::send(const wire::ServerMessage& m) {
  if (!open) return;
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(frame(m)), ec);
  if (ec) close();
}

void Client::reply(std::uint64_t seq, bool ok, const std::string& text) {
  wire::ServerMessage m;
  m.mutable_response()->set_seq(seq);
  m.mutable_response()->set_ok(ok);
  m.mutable_response()->set_text(text);
  m.mutable_response()->set_controlling(controlling);
  send(m);
}

void Client::close() {
  if (!open) return;
  open = false;
  boost::system::error_code ec;
  socket_.close(ec);
  server_.gone(shared_from_this());
}

void Client::read() {
  auto self = shared_from_this();
  socket_.async_read_some(asio::buffer(buf_), [this, self](boost::system::error_code ec, std::size_t n) {
    if (ec) {
      close();
      return;
    }
    decoder_.feed(buf_.data(), n);
    for (;;) {
      wire::Request r;
      std::string error;
      const FrameDecoder::Status s = decoder_.next(r, error);
      if (s == FrameDecoder::Status::NeedMore) break;
      if (s == FrameDecoder::Status::Oversized) {
        reply(0, false, error + "; closing the connection\n");
        close();
        return;
      }
      if (s == FrameDecoder::Status::Malformed)
        reply(0, false, error + "\n");
      else
        on_request(r);
      if (!open) return;
    }
    read();
  });
}

void Client::on_request(const wire::Request& r) {
  if (auto error = order_.check(r)) {
    reply(r.seq(), false, *error + "\n");
    return;
  }
  if (r.has_hello()) {
    const bool control = r.hello().control() && server_.take_control(*this);
    reply(r.seq(), true,
          fmt::format("{}{}", Session::describe(server_.stop()),
                      control ? "" : "read-only: another client controls the session\n"));
    return;
  }
  const std::string& line = r.command().line();
  if (!controlling && !read_only(line)) {
    reply(r.seq(), false, fmt::format("read-only client: '{}' needs control of the session\n", line));
    return;
  }
  const SessionReply s = server_.command(*this, line);
  wire::ServerMessage m;
  wire::Response& out = *m.mutable_response();
  out.set_seq(r.seq());
  out.set_ok(s.ok);
  out.set_text(s.text);
  out.set_controlling(controlling);
  if (s.stopped) *out.mutable_stop() = to_wire(server_.stop());
  send(m);
}

// "HOST:PORT" into an endpoint; an error message when it is not one.
std::string parse_endpoint(const std::string& text, tcp::endpoint& out) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) return fmt::format("'{}' is not HOST:PORT", text);
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(text.substr(0, colon), ec);
  if (ec) return fmt::format("'{}' is not an IP address", text.substr(0, colon));
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return fmt::format("'{}' is not a port number", port);
  out = tcp::endpoint(addr, static_cast<unsigned short>(std::stoul(port)));
  return {};
}

}  // namespace

int serve_remote(Session& session, const std::string& listen, bool allow_remote) {
  tcp::endpoint at;
  if (std::string e = parse_endpoint(listen, at); !e.empty()) {
    std::cerr << "nicsim: --listen: " << e << "\n";
    return kExitBadInput;
  }
  if (!at.address().is_loopback() && !allow_remote) {
    std::cerr << "nicsim: --listen " << listen << " is not a loopback address; add --allow-remote to serve it\n";
    return kExitBadInput;
  }
  // Protobuf would log every client string with bad UTF-8 to stderr; such a
  // request gets its error reply instead.
  google::protobuf::SetLogHandler(nullptr);
  asio::io_context io;
  try {
    Server server(io, at, session);
    std::cout << fmt::format("listening on {}:{} token {}\n", server.endpoint().address().to_string(),
                             server.endpoint().port(), server.token())
              << std::flush;
    server.accept();
    io.run();
  } catch (const boost::system::system_error& e) {
    std::cerr << "nicsim: --listen " << listen << ": " << e.what() << "\n";
    return kExitFailed;
  }
  return kExitOk;
}

namespace {

// The client's side: one request, its response (printing pushed events
// that come first).
bool round_trip(tcp::socket& s, FrameDecoder& decoder, const wire::Request& r, wire::Response& out) {
  asio::write(s, asio::buffer(frame(r)));
  std::array<char, 4096> buf{};
  for (;;) {
    wire::ServerMessage m;
    std::string error;
    const FrameDecoder::Status st = decoder.next(m, error);
    if (st == FrameDecoder::Status::Message) {
      if (m.has_event()) {
        std::cout << "[event] " << m.event().text() << std::flush;
        continue;
      }
      out = m.response();
      return true;
    }
    if (st != FrameDecoder::Status::NeedMore) {
      std::cerr << "nicsim: " << error << "\n";
      return false;
    }
    boost::system::error_code ec;
    const std::size_t n = s.read_some(asio::buffer(buf), ec);
    if (ec) return false;
    decoder.feed(buf.data(), n);
  }
}

}  // namespace

int attach_main(const std::string& address, const std::string& token, const std::string& script) {
  tcp::endpoint at;
  if (std::string e = parse_endpoint(address, at); !e.empty()) {
    std::cerr << "nicsim: attach: " << e << "\n";
    return kExitBadInput;
  }
  std::ifstream file;
  if (!script.empty()) {
    file.open(script);
    if (!file) {
      std::cerr << "nicsim: cannot read script " << script << "\n";
      return kExitBadInput;
    }
  }
  std::istream& in = script.empty() ? std::cin : file;
  asio::io_context io;
  tcp::socket s(io);
  boost::system::error_code ec;
  s.connect(at, ec);
  if (ec) {
    std::cerr << "nicsim: attach: cannot connect to " << address << ": " << ec.message() << "\n";
    return kExitFailed;
  }
  FrameDecoder decoder;
  wire::Request hello;
  hello.set_seq(1);
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_control(true);
  wire::Response r;
  if (!round_trip(s, decoder, hello, r)) return kExitFailed;
  std::cout << (r.ok() ? "" : "error: ") << r.text() << std::flush;
  if (!r.ok()) return kExitFailed;
  int code = kExitOk;
  std::uint64_t seq = 1;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    wire::Request c;
    c.set_seq(++seq);
    c.mutable_command()->set_line(line);
    if (!script.empty()) std::cout << "(nicsim) " << line << "\n";
    if (!round_trip(s, decoder, c, r)) return kExitFailed;
    std::cout << (r.ok() ? "" : "error: ") << r.text() << std::flush;
    if (!r.ok()) code = kExitFailed;
    if (line == "quit") break;
  }
  return code;
}

}  // namespace nicsim::debug
