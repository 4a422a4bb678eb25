/*
 * ping_pong: an example consumer program in plain C99, built outside the
 * nicsim tree and loaded with `nicsim run --plugin ping_pong.so`.
 *
 * Two nodes bounce numbered records over the management network (the way
 * perftest exchanges its bootstrap data), rank 0 reports the mean round
 * trip, then each node runs a helper thread and both meet at a barrier.
 * All state is on the stack: every simulated node runs this same code in
 * one process.
 */
#include <nicsim/app.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_PING = 1, TAG_PONG = 2 };

struct worker_arg {
  int iterations;
  uint64_t sum;
};

static void worker(void* p) {
  struct worker_arg* a = (struct worker_arg*)p;
  for (int i = 0; i < a->iterations; ++i) {
    a->sum += (uint64_t)i;
    nicsim_sleep_ns(100);
  }
}

static int expect_record(uint32_t peer, uint32_t tag, const char* word, int round) {
  char buf[64], want[64];
  long n = nicsim_mgmt_recv(peer, tag, buf, sizeof buf, NULL, 0);
  snprintf(want, sizeof want, "%s %d", word, round);
  if (n <= 0 || strcmp(buf, want) != 0) {
    nicsim_fail("unexpected record on the management network");
    return -1;
  }
  return 0;
}

/* The arguments, read by the run and, before anything is simulated, by the
 * argument check, so that a bad one is reported at its place in the
 * scenario file. */
static int parse_rounds(int argc, char** argv, int* rounds) {
  *rounds = 10;
  for (int i = 1; i < argc; ++i) {
    uint64_t v = 0;
    const int got = nicsim_arg_u64(argv[i], "--rounds=", 1, 1000000, &v);
    if (got < 0) return -1;
    if (got == 0) {
      nicsim_fail("ping_pong takes only --rounds=N");
      return -1;
    }
    *rounds = (int)v;
  }
  return 0;
}

static int check_args(int argc, char** argv) {
  int rounds;
  return parse_rounds(argc, argv, &rounds);
}

static int ping_pong(int argc, char** argv) {
  int rounds;
  if (parse_rounds(argc, argv, &rounds) != 0) return 2;
  if (nicsim_workload_size() != 2) {
    nicsim_fail("ping_pong needs exactly two nodes");
    return 2;
  }
  const uint32_t me = nicsim_workload_rank();
  const uint32_t peer = nicsim_workload_node(1 - me);
  char buf[64];
  const uint64_t t0 = nicsim_now_ps();
  for (int r = 0; r < rounds; ++r) {
    if (me == 0) {
      snprintf(buf, sizeof buf, "ping %d", r);
      if (nicsim_mgmt_send(peer, TAG_PING, buf, strlen(buf) + 1) != 0) return 1;
      if (expect_record(peer, TAG_PONG, "pong", r) != 0) return 1;
    } else {
      if (expect_record(peer, TAG_PING, "ping", r) != 0) return 1;
      snprintf(buf, sizeof buf, "pong %d", r);
      if (nicsim_mgmt_send(peer, TAG_PONG, buf, strlen(buf) + 1) != 0) return 1;
    }
  }
  if (me == 0) nicsim_result("mgmt_round_trip", (double)(nicsim_now_ps() - t0) / rounds / 1000.0, "ns");

  struct worker_arg arg = {5, 0};
  nicsim_thread_t t = nicsim_thread_spawn(worker, &arg, "worker");
  if (!t || nicsim_thread_join(t) != 0 || arg.sum != 10) {
    nicsim_fail("helper thread did not run to completion");
    return 1;
  }
  nicsim_log("%s done after %d rounds", nicsim_node_name(), rounds);
  return nicsim_barrier() == 0 ? 0 : 1;
}

int nicsim_plugin_init(void) {
  return nicsim_register_program_checked("ping_pong", ping_pong, check_args,
                                         "example plugin: records bounced over the management network (--rounds=N)");
}
