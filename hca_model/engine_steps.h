// The HCA's engines (requester, responder, completer) are written as steps,
// as the Linux rxe driver writes its responder and completer: an enum of
// steps, one function per step that does its part and names the next one,
// and one loop per engine that runs them and traces each. Each engine lists
// its steps once, as X(Step, function), and its final steps as E(Step); the
// enum, the step names and the loop's dispatch are generated from the list.
#pragma once
#include <cstdint>

#include "core/sim.h"
#include "trace/trace.h"

#define NICSIM_HCA_STEP_ENUM(name, fn) name,
#define NICSIM_HCA_END_ENUM(name) name,
#define NICSIM_HCA_STEP_NAME(name, fn) #name,
#define NICSIM_HCA_END_NAME(name) #name,
// A case of an engine's dispatch: the step's function, on the engine's
// context `ctx`, names the next step.
#define NICSIM_HCA_STEP_CASE(name, fn) \
  case decltype(step)::name:           \
    return fn(ctx);

namespace nicsim::hca {

// An engine's loop: runs steps from `step` until one of the final steps
// (those from `end` on), calling on_step(step) before each when `trace`.
// `dispatch(step)` runs one step and returns the next.
template <class Step, class Dispatch, class OnStep>
Step run_steps(Step step, Step end, bool trace, Dispatch&& dispatch, OnStep&& on_step) {
  while (step < end) {
    if (trace) on_step(step);
    step = dispatch(step);
  }
  return step;
}

// Whether steps are traced: asked once per run of an engine.
inline bool tracing_steps(std::uint32_t device) { return Sim::get().tracer().on(device, Component::nic); }

// One record per step: the engine, the step, the QP and the packet's PSN.
inline void trace_step(std::uint32_t device, const char* engine, const char* step, std::uint32_t qpn,
                       std::uint32_t psn) {
  Sim::get().tracer().record(Calendar::now(), device, Component::nic, engine,
                             {{"step", step}, {"qp", qpn}, {"psn", psn}});
}

}  // namespace nicsim::hca
