// Turns a host-thread stack overflow into a message that names the thread
// and the parameter to raise, instead of a bare segmentation fault.
//
// SystemC (QuickThreads) puts a PROT_NONE red zone below every coroutine
// stack, so an overflow faults there. A SIGSEGV handler on an alternate
// signal stack compares the faulting stack pointer and address with the
// registered thread stacks; on a match it prints the message and lets the
// fault kill the process as before. Other faults go to the previous handler
// (a sanitizer's, or the default).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace nicsim::host {

// Registers the stack of the calling coroutine: `top` is the address of a
// local of its outermost frame, `size` the stack size it was given.
void stack_guard_add(const void* key, const void* top, std::size_t size, std::string message);
void stack_guard_remove(const void* key);

}  // namespace nicsim::host
