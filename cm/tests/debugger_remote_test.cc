// The debugger served over TCP: tokens, order, read-only clients, pushed
// events, re-attaching, and bad frames answered without harm.
#include <utility>  // before boost (Boost 1.74 with C++20)

#include <boost/asio.hpp>

#include <array>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "debug/frames.h"
#include "tests/test_shell.h"

namespace nicsim::cm {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using debug::wire::Request;
using debug::wire::ServerMessage;

const std::string kScenario = std::string(NICSIM_SOURCE_DIR) + "/cm/tests/debug/rc_write.textproto";

struct Served {
  unsigned short port = 0;
  std::string token;
};

// Starts `nicsim debug --listen 127.0.0.1:0` in the background (it ends on
// `quit`, or after a minute) and reads its port and token.
Served serve(const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "server.txt";
  const std::string cmd = "timeout 60 " + std::string(NICSIM_BIN) + " debug " + kScenario + " --listen 127.0.0.1:0 > " +
                          out.string() + " 2>&1 &";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  Served s;
  for (int i = 0; i < 200 && s.port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string text = testing::slurp(out);
    const std::size_t at = text.find("listening on 127.0.0.1:");
    if (at == std::string::npos || text.find('\n', at) == std::string::npos) continue;
    const std::size_t port = at + 23, tok = text.find(" token ", port);
    s.port = static_cast<unsigned short>(std::stoul(text.substr(port, tok - port)));
    s.token = text.substr(tok + 7, 32);
  }
  return s;
}

class RawClient {
 public:
  explicit RawClient(unsigned short port) : socket_(io_) {
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  void close() { socket_.close(); }
  void send_bytes(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  void send(const Request& r) { send_bytes(debug::frame(r)); }
  Request hello(std::uint64_t seq, const std::string& token, bool control) {
    Request r;
    r.set_seq(seq);
    r.mutable_hello()->set_token(token);
    r.mutable_hello()->set_control(control);
    return r;
  }
  Request command(std::uint64_t seq, const std::string& line) {
    Request r;
    r.set_seq(seq);
    r.mutable_command()->set_line(line);
    return r;
  }
  // The next message; false when the connection closed.
  bool next(ServerMessage& m) {
    std::array<char, 4096> buf{};
    for (;;) {
      std::string error;
      if (decoder_.next(m, error) == debug::FrameDecoder::Status::Message) return true;
      boost::system::error_code ec;
      const std::size_t n = socket_.read_some(asio::buffer(buf), ec);
      if (ec) return false;
      decoder_.feed(buf.data(), n);
    }
  }
  debug::wire::Response ask(const Request& r) {
    send(r);
    ServerMessage m;
    while (next(m))
      if (m.has_response()) return m.response();
    ADD_FAILURE() << "connection closed";
    return {};
  }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  debug::FrameDecoder decoder_;
};

TEST(DebuggerRemote, TokensOrderReadOnlyClientsEventsReattachAndBadFrames) {
  const Served s = serve(testing::temp_dir("debugger_remote"));
  ASSERT_NE(s.port, 0);
  RawClient a(s.port);
  // A frame that is not a Request, then requests out of order or before the hello.
  a.send_bytes(std::string("\0\0\0\5\xff\xff\xff\xff\xff", 9));
  ServerMessage m;
  ASSERT_TRUE(a.next(m));
  EXPECT_FALSE(m.response().ok());
  EXPECT_NE(m.response().text().find("frame of 5 bytes is not a nicsim.debug.wire.Request"), std::string::npos)
      << m.response().text();
  EXPECT_NE(a.ask(a.command(1, "where")).text().find("the first request must be a hello"), std::string::npos);
  EXPECT_NE(a.ask(a.hello(7, s.token, true)).text().find("request 7 out of order: expected 1"), std::string::npos);
  EXPECT_EQ(a.ask(a.hello(1, "not-the-token", true)).text(), "wrong session token\n");
  debug::wire::Response r = a.ask(a.hello(1, s.token, true));
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.controlling());

  RawClient b(s.port);
  r = b.ask(b.hello(1, s.token, true));
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.controlling());
  EXPECT_NE(r.text().find("read-only"), std::string::npos);
  r = b.ask(b.command(2, "continue"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.text(), "read-only client: 'continue' needs control of the session\n");
  EXPECT_TRUE(b.ask(b.command(3, "where")).ok());

  // The controlling client runs on; the other is told where it stopped.
  EXPECT_TRUE(a.ask(a.command(2, "break fsm machine=hca.qp object=h0.qp64 to=Rts")).ok());
  r = a.ask(a.command(3, "continue"));
  EXPECT_EQ(r.stop().position(), "event 2698 transition 27");
  ASSERT_TRUE(b.next(m));
  ASSERT_TRUE(m.has_event());
  EXPECT_NE(m.event().stop().reason().find("h0.qp64 Rtr -> Rts"), std::string::npos);

  // An oversized frame: an error, then the server closes that connection.
  b.send_bytes(std::string("\x00\x10\x00\x00", 4));
  ASSERT_TRUE(b.next(m));
  EXPECT_EQ(m.response().text(), "frame of 1048576 bytes: at most 65536; closing the connection\n");
  EXPECT_FALSE(b.next(m));

  // The controller leaves: the run stays paused where it was, and a new
  // client takes control there.
  a.close();
  RawClient c(s.port);
  r = c.ask(c.hello(1, s.token, true));
  EXPECT_TRUE(r.controlling());
  EXPECT_NE(r.text().find("stopped at event 2698 transition 27"), std::string::npos) << r.text();
  EXPECT_NE(c.ask(c.command(2, "show h0.qp64")).text().find("state             Rts"), std::string::npos);
  c.ask(c.command(3, "quit"));
}

// The Python example (examples/debug_client) drives a session.
TEST(DebuggerRemote, PythonExampleClientDrivesASession) {
  const Served s = serve(testing::temp_dir("debugger_python"));
  ASSERT_NE(s.port, 0);
  const testing::CommandResult r = testing::run_command(
      "/usr/bin/python3 " + std::string(NICSIM_SOURCE_DIR) +
      "/examples/debug_client/debug_client.py 127.0.0.1:" + std::to_string(s.port) + " " + s.token +
      " 'break fsm machine=hca.qp object=h0.qp64 to=Rts' continue 'show h0.qp64' quit 2>&1");
  EXPECT_EQ(r.status, 0) << r.output
                         << "\n(needs Debian's protobuf-compiler and python3-protobuf: scripts/deps.sh installs them)";
  EXPECT_NE(r.output.find("[stop: event 2698 transition 27 at 760138428 ps]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("next_psn          2592192"), std::string::npos) << r.output;
}

TEST(DebuggerRemote, ListeningBeyondLoopbackNeedsAllowRemote) {
  const testing::CliResult r = testing::run_nicsim("debug " + kScenario + " --listen 0.0.0.0:0");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--listen 0.0.0.0:0 is not a loopback address; add --allow-remote"), std::string::npos) << r.out;
  const testing::CliResult bad = testing::run_nicsim("debug " + kScenario + " --listen localhost");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("'localhost' is not HOST:PORT"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace nicsim::cm
