#include "debug/session.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/sim.h"
#include "world/world.h"

namespace nicsim::debug {

namespace {

// Frames between the session and its child: a 4-byte length, then text.
constexpr std::uint32_t kMaxFrame = 64u << 20;

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool send_frame(int fd, const std::string& text) {
  const std::uint32_t n = static_cast<std::uint32_t>(text.size());
  char len[4];
  std::memcpy(len, &n, 4);
  return write_all(fd, len, 4) && write_all(fd, text.data(), text.size());
}

bool receive_frame(int fd, std::string& text) {
  char len[4];
  if (!read_all(fd, len, 4)) return false;
  std::uint32_t n;
  std::memcpy(&n, len, 4);
  if (n > kMaxFrame) return false;
  text.resize(n);
  return read_all(fd, text.data(), n);
}

// "S <time>\n<position>\n<reason>\n" then "H <time>\t<position>\t<reason>\n" per recorded hit.
std::string stop_frame(const Debugger& d) {
  const Stop& s = d.last_stop();
  std::string f = fmt::format("S {}\n{}\n{}\n", s.time, s.position.str(), s.reason);
  for (const Stop& h : d.hits_on_the_way()) f += fmt::format("H {}\t{}\t{}\n", h.time, h.position.str(), h.reason);
  return f;
}

bool parse_stop(const std::string& frame, Stop& stop, std::vector<Stop>& hits) {
  std::istringstream in(frame);
  std::string head, pos, reason;
  if (!std::getline(in, head) || !std::getline(in, pos) || !std::getline(in, reason)) return false;
  if (head.size() < 3 || head[0] != 'S') return false;
  stop.time = std::stoull(head.substr(2));
  stop.reason = reason;
  if (!Position::parse(pos, stop.position)) return false;
  hits.clear();
  for (std::string line; std::getline(in, line);) {
    const std::size_t a = line.find('\t'), b = line.find('\t', a + 1);
    if (line.size() < 3 || line[0] != 'H' || a == std::string::npos || b == std::string::npos) return false;
    Stop h;
    h.time = std::stoull(line.substr(2, a - 2));
    if (!Position::parse(line.substr(a + 1, b - a - 1), h.position)) return false;
    h.reason = line.substr(b + 1);
    hits.push_back(h);
  }
  return true;
}

// Internal commands of the child (not in help).
std::string internal_command(Debugger& d, const std::string& line, bool& handled) {
  handled = true;
  if (line == "_names") {
    std::string out;
    for (const std::string& n : d.object_names()) out += n + "\n";
    return out;
  }
  if (line == "_breakpoints") {
    std::string out;
    for (const Breakpoint& b : d.breakpoints())
      if (!b.temporary)
        out += fmt::format("_bp {} {} {} {}\n", b.id, b.enabled ? "on" : "off", d.next_breakpoint_id(), b.spec());
    return out;
  }
  handled = false;
  return {};
}

// Passes `fd` over the unix socket `sock` with one byte.
bool send_fd(int sock, int fd) {
  char byte = 'f';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(sock, &msg, 0) == 1;
}

int receive_fd(int sock) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (::recvmsg(sock, &msg, 0) != 1) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

// The zygote: forks every simulation child from one unchanging memory image,
// so that each re-run allocates exactly as the first did (host addresses
// that reach the simulation, such as buffer addresses, stay the same). For
// each socket it receives it forks a child that serves the session on it,
// and answers with the child's pid. Allocates nothing between forks.
[[noreturn]] void run_zygote(const Scenario& scenario, int sock) {
  ::signal(SIGCHLD, SIG_IGN);  // children are reaped by the kernel
  for (;;) {
    const int fd = receive_fd(sock);
    if (fd < 0) ::_exit(0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(sock);
      ::signal(SIGCHLD, SIG_DFL);
      serve_child(scenario, fd);
    }
    ::close(fd);
    if (!write_all(sock, reinterpret_cast<const char*>(&pid), sizeof(pid))) ::_exit(0);
  }
}

}  // namespace

void serve_child(const Scenario& scenario, int fd) {
  int code = 0;
  try {
    Sim sim(scenario.seed);
    World world(scenario);
    Debugger debugger(world);
    debugger.set_pause_handler([fd](Debugger& d, const Stop&) {
      if (!send_frame(fd, stop_frame(d))) ::_exit(0);
      for (std::string line; receive_frame(fd, line);) {
        bool handled = false;
        std::string text = internal_command(d, line, handled);
        Reply r{true, text, false};
        if (!handled) r = d.execute(line);
        if (r.ok && r.resumes) return;
        if (!send_frame(fd, fmt::format("R {}\n{}", r.ok ? 1 : 0, r.text))) break;
      }
      ::_exit(0);  // the session went away
    });
    code = debugger.run() ? 0 : 1;
  } catch (const std::exception& e) {
    // A world the scenario cannot build: the session reports that the
    // simulation did not start.
    std::fprintf(stderr, "nicsim: %s\n", e.what());
    code = 2;
  }
  std::fflush(nullptr);
  ::_exit(code);
}

Session::Session(Scenario scenario) : scenario_(std::move(scenario)) {}

Session::~Session() {
  end_child();
  if (zygote_ >= 0) {
    ::close(zygote_fd_);  // the zygote ends when its socket closes
    ::waitpid(zygote_, nullptr, 0);
  }
}

bool Session::start() {
  SessionReply r;
  return restart_to(Position{}, false, r);
}

bool Session::start_zygote() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    error_ = fmt::format("cannot make a socket pair: {}", std::strerror(errno));
    return false;
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    error_ = fmt::format("cannot fork: {}", std::strerror(errno));
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_zygote(scenario_, fds[1]);
  }
  ::close(fds[1]);
  zygote_ = pid;
  zygote_fd_ = fds[0];
  return true;
}

bool Session::spawn() {
  if (zygote_ < 0 && !start_zygote()) return false;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    error_ = fmt::format("cannot make a socket pair: {}", std::strerror(errno));
    return false;
  }
  pid_t pid = -1;
  const bool sent = send_fd(zygote_fd_, fds[1]);
  ::close(fds[1]);
  if (!sent || !read_all(zygote_fd_, reinterpret_cast<char*>(&pid), sizeof(pid)) || pid <= 0) {
    ::close(fds[0]);
    error_ = "cannot start a simulation process";
    return false;
  }
  child_ = pid;
  fd_ = fds[0];
  return true;
}

void Session::end_child() {
  if (child_ < 0) return;
  ::close(fd_);
  ::kill(child_, SIGKILL);  // the zygote's child: the kernel reaps it
  child_ = -1;
  fd_ = -1;
}

SessionReply Session::ask(const std::string& line) {
  SessionReply r;
  std::string frame;
  if (!send_frame(fd_, line) || !receive_frame(fd_, frame)) {
    r.ok = false;
    r.text = "the simulation process ended unexpectedly (see its messages above)\n";
    r.quit = true;
    return r;
  }
  if (frame.rfind("R ", 0) == 0) {
    r.ok = frame.size() > 2 && frame[2] == '1';
    r.text = frame.substr(std::min<std::size_t>(frame.size(), 4));
    return r;
  }
  if (!parse_stop(frame, stop_, recorded_)) {
    r.ok = false;
    r.text = "garbled answer from the simulation process\n";
    return r;
  }
  r.stopped = true;
  r.text = describe(stop_);
  refresh_names();
  return r;
}

std::string Session::describe(const Stop& s) {
  return fmt::format("stopped at {}, {}: {}\n", s.position.str(), format_time(s.time), s.reason);
}

void Session::refresh_names() {
  std::string frame;
  if (!send_frame(fd_, "_names") || !receive_frame(fd_, frame) || frame.size() < 4) return;
  names_.clear();
  std::istringstream in(frame.substr(4));
  for (std::string n; std::getline(in, n);) names_.push_back(n);
}

// A fresh child, the current breakpoints, then on to `target` (recording
// the hits before it when `record`).
bool Session::restart_to(const Position& target, bool record, SessionReply& out) {
  std::string breakpoints;
  if (child_ >= 0) {
    const SessionReply b = ask("_breakpoints");
    breakpoints = b.text;
  }
  end_child();
  if (!spawn()) return false;
  std::string frame;
  if (!receive_frame(fd_, frame) || !parse_stop(frame, stop_, recorded_)) {
    error_ = "the simulation process did not start (see its messages above)";
    end_child();
    return false;
  }
  std::istringstream in(breakpoints);
  for (std::string line; std::getline(in, line);) ask(line);
  if (target == Position{} && !record) {
    out.stopped = true;
    out.text = describe(stop_);
    refresh_names();
    return true;
  }
  out = ask(fmt::format("{} {}", record ? "_record" : "_goto", target.str()));
  return out.ok;
}

SessionReply Session::reverse_step() {
  const Position& here = stop_.position;
  if (here.event == 0) return SessionReply{false, "at the start already\n"};
  Position target{here.at == Position::At::End ? here.event : here.event - 1};
  SessionReply r;
  if (!restart_to(target, false, r)) return SessionReply{false, error_ + "\n"};
  return r;
}

SessionReply Session::reverse_continue() {
  const Position here = stop_.position;
  if (here.event == 0) return SessionReply{false, "at the start already\n"};
  SessionReply r;
  if (!restart_to(here, true, r)) return SessionReply{false, error_ + "\n"};
  const std::vector<Stop> hits = recorded_;
  if (hits.empty()) {
    if (!restart_to(Position{}, false, r)) return SessionReply{false, error_ + "\n"};
    r.text = "no breakpoint hit before " + here.str() + "; " + r.text;
    return r;
  }
  if (!restart_to(hits.back().position, false, r)) return SessionReply{false, error_ + "\n"};
  return r;
}

SessionReply Session::command(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  if (word == "quit" || word == "q") {
    end_child();
    return SessionReply{true, "", false, true};
  }
  if (word == "reverse-step" || word == "rs") return reverse_step();
  if (word == "reverse-continue" || word == "rc") return reverse_continue();
  std::string what;
  std::uint64_t n = 0;
  if (word == "until" && (in >> what) && what == "event" && (in >> n) && n <= stop_.position.event) {
    // An event already past: re-run to it.
    SessionReply r;
    if (!restart_to(Position{n}, false, r)) return SessionReply{false, error_ + "\n"};
    return r;
  }
  if (!word.empty() && word[0] == '_')
    return SessionReply{false, fmt::format("unknown command '{}' (try help)\n", word)};
  if (child_ < 0) return SessionReply{false, "no simulation process\n"};
  return ask(line);
}

}  // namespace nicsim::debug
