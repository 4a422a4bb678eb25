/*
 * nicsim/app.h: the interface between nicsim and consumer programs.
 *
 * A consumer program is a C function registered by name. A scenario's
 * workload runs it on a simulated host thread of each node it names, with
 * argc/argv. Everything here runs in simulated time: nicsim_sleep_ns waits
 * in the simulation, and every call is charged to the node's CPU.
 *
 * All nodes of a simulation live in one process: a program must keep its
 * state on its stack, in memory from nicsim_alloc, or behind
 * nicsim_program_context(), never in static variables (those would be shared
 * by every simulated node).
 *
 * Plugins: a shared object built against this header (see the nicsim CMake
 * package, nicsim_add_plugin) defines nicsim_plugin_init() and registers its
 * programs there; `nicsim run --plugin FILE.so` loads it.
 *
 * C99 and C++; needs nothing else from nicsim.
 */
#ifndef NICSIM_APP_H
#define NICSIM_APP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NICSIM_APP_API_VERSION 2 /* 2: nicsim_register_program_checked */

/* A program's entry point: returns 0 on success; anything else fails the
 * workload (and `nicsim run` exits 1). */
typedef int (*nicsim_program_fn)(int argc, char** argv);

/* Registers a program. Returns 0, or -1 if the name is taken or empty. */
int nicsim_register_program(const char* name, nicsim_program_fn fn, const char* doc);

/* A program's argument check: the program's own option parser, run on a
 * workload's arguments (argv[0] the program's name) when the scenario is
 * loaded, before anything is built or simulated, so that `nicsim validate`
 * and `nicsim run` report a bad argument at its place in the scenario file
 * and exit 2. It runs outside any simulated thread: of nicsim's calls it
 * may make only nicsim_fail, nicsim_log and the nicsim_arg_* readers (any
 * other nicsim_* call is reported as the program's error), it must not
 * call into a stack (verbs, ep_*, dat_*, sockets), and it keeps no state.
 * It takes the arguments when it returns 0 and has not called nicsim_fail;
 * the reason it refuses them is its nicsim_fail text, else its last
 * nicsim_log line. */
typedef int (*nicsim_args_check_fn)(int argc, char** argv);

/* nicsim_register_program with an argument check (NULL: none). */
int nicsim_register_program_checked(const char* name, nicsim_program_fn fn, nicsim_args_check_fn check,
                                    const char* doc);

/* Defined by a plugin; called once after the plugin is loaded. Returns 0 on
 * success. */
int nicsim_plugin_init(void);

/* ---- where am I --------------------------------------------------------- */
uint32_t nicsim_node_id(void);          /* this node's index in the scenario */
const char* nicsim_node_name(void);
uint32_t nicsim_node_count(void);       /* nodes in the scenario */
const char* nicsim_node_name_of(uint32_t node_id);
/* This workload's participants (like MPI ranks): the nodes the scenario's
 * workload names, in scenario order. */
uint32_t nicsim_workload_size(void);
uint32_t nicsim_workload_rank(void);
uint32_t nicsim_workload_node(uint32_t rank);

/* ---- simulated time ----------------------------------------------------- */
uint64_t nicsim_now_ps(void);
uint64_t nicsim_now_ns(void);
void nicsim_sleep_ns(uint64_t ns);
void nicsim_sleep_ps(uint64_t ps);
void nicsim_yield(void);

/* ---- threads ------------------------------------------------------------ */
typedef struct nicsim_thread* nicsim_thread_t;
/* Spawns a simulated thread on this node running fn(arg). NULL on failure. */
nicsim_thread_t nicsim_thread_spawn(void (*fn)(void* arg), void* arg, const char* name);
/* Waits for the thread to finish. 0 on success, -1 on a bad handle. */
int nicsim_thread_join(nicsim_thread_t thread);

/* ---- memory ------------------------------------------------------------- */
/* Node memory (accounted per node, visible to the node's NIC for DMA). */
void* nicsim_alloc(size_t bytes, size_t align);
void nicsim_free(void* p);
/* One pointer of per-program-instance state, initially NULL. */
void** nicsim_program_context(void);

/* ---- output ------------------------------------------------------------- */
/* printf-style; goes to the trace ("program" component) and, with
 * `nicsim run -v`, to stderr prefixed by time and node. */
void nicsim_log(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A named result of this program instance, with its unit ("ns", "MB/s",
 * "packets"...). Results appear in the report and results.json. */
void nicsim_result(const char* name, double value, const char* unit);
/* The tail of a loop's n per-iteration samples (say each round trip, in
 * ps): reports <name>_p99, the 99th percentile by nearest rank (the
 * ceil(0.99 n)-th smallest sample), and <name>_max, each sample divided by
 * `divisor` and in `unit` (name and unit those of the mean it accompanies).
 * Leaves the samples as they are; reports nothing for n = 0. Like
 * nicsim_result, charges no CPU time. */
void nicsim_result_tail(const char* name, const uint64_t* samples, uint32_t n, double divisor, const char* unit);
/* Marks this program instance failed with a reason (it still runs on). */
void nicsim_fail(const char* reason);

/* ---- arguments ---------------------------------------------------------- */
/* Strict numeric options for a program's argument parser. When `arg` starts
 * with `key` (say "--iters="), its rest must be a whole decimal number in
 * [min, max]: it is stored in *out and the call returns 1; a malformed or
 * out-of-range value marks the program failed with a reason naming the
 * argument and the range (nicsim_fail) and returns -1. Returns 0 when `arg`
 * is another option. */
int nicsim_arg_u64(const char* arg, const char* key, uint64_t min, uint64_t max, uint64_t* out);
/* The same for a comma-separated list of 1 to `cap` numbers ("--sizes=8,64"),
 * stored in out[0..*n). */
int nicsim_arg_u64_list(const char* arg, const char* key, uint64_t min, uint64_t max, uint64_t* out,
                        uint32_t cap, uint32_t* n);

/* ---- management network (bootstrap only) -------------------------------- */
/* A separate, modelled management Ethernet (latency and bandwidth are the
 * scenario's "mgmt" parameters) for exchanging small bootstrap records:
 * queue pair numbers, keys, addresses, as perftest does over TCP or an MPI
 * launcher does. Never for data the stacks under test must carry: that
 * crosses the simulated fabric. Messages are at most NICSIM_MGMT_MAX bytes
 * and are matched by (source node, tag) in FIFO order. Tags from 0xff000000
 * up are reserved (nicsim_barrier uses them). A NULL buffer with a nonzero
 * length is an error (-1). */
#define NICSIM_MGMT_MAX 4096
#define NICSIM_ANY_NODE 0xffffffffu
/* 0 on success; -1 for a bad node or an oversized message. */
int nicsim_mgmt_send(uint32_t dst_node, uint32_t tag, const void* buf, size_t len);
/* Blocks until a message with `tag` from `src_node` (or NICSIM_ANY_NODE)
 * arrives. Returns its length (truncated to cap), or -1 on timeout
 * (timeout_ns 0 = wait forever). *from receives the sender if non-NULL. */
long nicsim_mgmt_recv(uint32_t src_node, uint32_t tag, void* buf, size_t cap, uint32_t* from,
                      uint64_t timeout_ns);
/* All nodes of this workload wait until each has reached the barrier. */
int nicsim_barrier(void);

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_APP_H */
