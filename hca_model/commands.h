// The HCA's command processor ("firmware"): executes one HCR command at a
// time. Input mailboxes are DMA-read from host memory, the command runs for
// the command latency, output mailboxes are DMA-written, then the HCR go bit
// clears with the status (and a COMMAND_DONE event if asked for).
#pragma once
#include <cstdint>
#include <vector>

#include "hca_model/hca_regs.h"

namespace nicsim::hca {

class Hca;
struct QpCtx;

class CommandProcessor {
 public:
  explicit CommandProcessor(Hca& hca) : hca_(hca) {}
  void start(std::uint8_t* hcr);
  bool busy() const { return busy_; }

 private:
  std::uint32_t input_size() const;
  std::uint32_t output_size() const;
  void read_input(std::uint64_t);
  void output_written(std::uint64_t status);
  void input_read(std::uint64_t status);
  void execute();
  void finish(CmdStatus status);
  CmdStatus query_hca();
  CmdStatus sw2hw_mpt();
  CmdStatus hw2sw_mpt();
  CmdStatus write_mtt();
  CmdStatus sw2hw_eq();
  CmdStatus hw2sw_eq();
  CmdStatus sw2hw_cq(bool resize);
  CmdStatus hw2sw_cq();
  CmdStatus query_cq();
  CmdStatus modify_qp();
  CmdStatus query_qp();
  CmdStatus conf_special_qp();
  CmdStatus mad_ifc();
  CmdStatus mcg(bool attach);
  CmdStatus port_command(bool up);
  CmdStatus set_ib();
  void apply_qp_fields(QpCtx& q, std::uint32_t mask);

  Hca& hca_;
  std::uint8_t* hcr_ = nullptr;
  bool busy_ = false;
  std::uint16_t opcode_ = 0;
  std::uint64_t in_param_ = 0, out_param_ = 0;
  std::uint32_t in_mod_ = 0, token_ = 0;
  bool event_ = false;
  std::vector<std::uint8_t> in_, out_;
  std::uint32_t mtt_count_ = 0;
};

}  // namespace nicsim::hca
