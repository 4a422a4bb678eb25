// World set-up for a fabric run by the InfiniBand subnet manager: no static
// addresses or routes; every IB device is marked subnet-managed (its ports
// wait in Init for the SM), and the SM program runs on its node from time 0
// as a daemon the run does not wait for.
#include <fmt/format.h>

#include "world/world.h"

namespace nicsim {

void World::start_subnet_manager() {
  for (auto& n : nodes_) n->nic().set_subnet_managed(true);
  for (auto& s : switches_) s->set_subnet_managed(true);
  const SubnetManagerSpec& spec = scenario_.subnet_manager;
  const ProgramInfo* info = ProgramRegistry::instance().find("subnet_manager");
  if (!info) throw std::logic_error("the subnet_manager program is not registered");
  sm_workload_.program = "subnet_manager";
  sm_workload_.nodes = {spec.node};
  sm_workload_.start = 0;
  sm_workload_.args = spec.args;
  sm_workload_.loc = spec.loc;
  const auto index = static_cast<std::uint32_t>(scenario_.workloads.size());
  programs_.push_back(std::make_unique<ProgramInstance>(*info, sm_workload_, index, 0, *nodes_[spec.node]));
  programs_.back()->daemon = true;
}

}  // namespace nicsim
