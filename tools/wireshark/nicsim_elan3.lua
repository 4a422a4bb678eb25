-- Wireshark/tshark dissector for the Elan3 network packets and ack tokens
-- that nicsim writes to pcap files (link type LINKTYPE_USER1, 148).
--
-- The layout is the model's contract in elan_model/elan3_regs.h
-- (NICSIM_ELAN3_PKT_HEADER, NICSIM_ELAN3_ACK, NICSIM_ELAN3_TRANS,
-- NICSIM_ELAN3_TOKENS): little-endian fields, a CRC-32C (Castagnoli,
-- reflected, init and final xor 0xffffffff) over everything before it, stored
-- little-endian in the last four bytes. An ack token is exactly 16 bytes; a
-- data packet is at least 28 (24-byte header, CRC), which is how the
-- receiving Elan tells them apart too.
--
--   tshark -X lua_script:tools/wireshark/nicsim_elan3.lua -r out/x/packets.pcap
--
-- The CRC of every frame is checked; a bad one is an expert error
-- ("elan3.crc.bad"), as is a length field that disagrees with the frame.

local elan3 = Proto("elan3", "Quadrics Elan3 network packet (nicsim model)")

local trans_names = { [1] = "WriteBlock", [2] = "QueuedWrite", [3] = "ReadRequest", [4] = "SetEvent" }
local token_names = { [0] = "Ok", [1] = "TestFail", [2] = "Discard", [3] = "Error" }

local HEADER_SIZE = 0x18
local ACK_SIZE = 0x10
local CRC_SIZE = 4

local f = {
  kind = ProtoField.string("elan3.kind", "Kind"),
  route_first = ProtoField.uint16("elan3.route_first", "Destination (first node)", base.DEC),
  route_last = ProtoField.uint16("elan3.route_last", "Broadcast last node (0: unicast)", base.DEC),
  trans = ProtoField.uint8("elan3.trans", "Transaction", base.DEC, trans_names),
  flags = ProtoField.uint8("elan3.flags", "Flags", base.HEX),
  flag_last = ProtoField.bool("elan3.flags.last", "Last packet of its DMA", 8, nil, 0x01),
  flag_first = ProtoField.bool("elan3.flags.first", "First packet of its DMA", 8, nil, 0x02),
  flag_retry = ProtoField.bool("elan3.flags.retry", "Retransmission", 8, nil, 0x04),
  flag_sync = ProtoField.bool("elan3.flags.sync", "Sync (receiver adopts seq)", 8, nil, 0x08),
  seq = ProtoField.uint16("elan3.seq", "Sequence number", base.DEC),
  src_node = ProtoField.uint16("elan3.src_node", "Source node", base.DEC),
  length = ProtoField.uint16("elan3.length", "Payload length", base.DEC),
  addr = ProtoField.uint32("elan3.addr", "E3_Addr", base.HEX),
  event = ProtoField.uint32("elan3.event", "Event", base.HEX),
  cookie = ProtoField.uint32("elan3.cookie", "Cookie (destination vproc)", base.HEX),
  payload = ProtoField.bytes("elan3.payload", "Payload"),
  ack_route = ProtoField.uint16("elan3.ack.route", "Token destination node", base.DEC),
  ack_token = ProtoField.uint8("elan3.ack.token", "Token", base.DEC, token_names),
  ack_vc = ProtoField.uint8("elan3.ack.vc", "Virtual channel of the answered packet", base.DEC),
  ack_seq = ProtoField.uint16("elan3.ack.seq", "Answered sequence number", base.DEC),
  ack_src_node = ProtoField.uint16("elan3.ack.src_node", "Token source node", base.DEC),
  ack_expect = ProtoField.uint16("elan3.ack.expect", "Next expected sequence number", base.DEC),
  crc = ProtoField.uint32("elan3.crc", "CRC-32C", base.HEX),
  crc_good = ProtoField.bool("elan3.crc.good", "CRC good"),
}
elan3.fields = f

local e_crc = ProtoExpert.new("elan3.crc.bad", "Bad CRC-32C", expert.group.CHECKSUM, expert.severity.ERROR)
local e_len = ProtoExpert.new("elan3.length.bad", "Length field disagrees with the frame", expert.group.MALFORMED,
  expert.severity.ERROR)
local e_short = ProtoExpert.new("elan3.short", "Frame shorter than an Elan3 header", expert.group.MALFORMED,
  expert.severity.ERROR)
elan3.experts = { e_crc, e_len, e_short }

-- CRC-32C, reflected polynomial 0x82f63b78, one table lookup per byte.
local crc_table = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if bit32.band(c, 1) ~= 0 then
      c = bit32.bxor(bit32.rshift(c, 1), 0x82f63b78)
    else
      c = bit32.rshift(c, 1)
    end
  end
  crc_table[i] = c
end

local function crc32c(tvb, len)
  local c = 0xffffffff
  local bytes = tvb:raw(0, len)
  for i = 1, len do
    c = bit32.bxor(crc_table[bit32.band(bit32.bxor(c, bytes:byte(i)), 0xff)], bit32.rshift(c, 8))
  end
  return bit32.bxor(c, 0xffffffff)
end

local function add_crc(tvb, pinfo, tree, len)
  local stored = tvb(len - CRC_SIZE, CRC_SIZE):le_uint()
  local good = crc32c(tvb, len - CRC_SIZE) == stored
  tree:add_le(f.crc, tvb(len - CRC_SIZE, CRC_SIZE))
  local g = tree:add(f.crc_good, good)
  g:set_generated()
  if not good then
    tree:add_proto_expert_info(e_crc)
    pinfo.cols.info:append(" [BAD CRC]")
  end
end

local function dissect_token(tvb, pinfo, tree)
  tree:add(f.kind, "ack token"):set_generated()
  tree:add_le(f.ack_route, tvb(0x00, 2))
  tree:add_le(f.ack_token, tvb(0x02, 1))
  tree:add_le(f.ack_vc, tvb(0x03, 1))
  tree:add_le(f.ack_seq, tvb(0x04, 2))
  tree:add_le(f.ack_src_node, tvb(0x06, 2))
  tree:add_le(f.ack_expect, tvb(0x08, 2))
  local token = tvb(0x02, 1):le_uint()
  pinfo.cols.src = tostring(tvb(0x06, 2):le_uint())
  pinfo.cols.dst = tostring(tvb(0x00, 2):le_uint())
  pinfo.cols.info = string.format("Token %s seq=%d expect=%d", token_names[token] or ("?" .. token),
    tvb(0x04, 2):le_uint(), tvb(0x08, 2):le_uint())
  add_crc(tvb, pinfo, tree, ACK_SIZE)
end

local function dissect_packet(tvb, pinfo, tree, len)
  tree:add(f.kind, "data packet"):set_generated()
  tree:add_le(f.route_first, tvb(0x00, 2))
  tree:add_le(f.route_last, tvb(0x02, 2))
  tree:add_le(f.trans, tvb(0x04, 1))
  local ft = tree:add_le(f.flags, tvb(0x05, 1))
  ft:add(f.flag_last, tvb(0x05, 1))
  ft:add(f.flag_first, tvb(0x05, 1))
  ft:add(f.flag_retry, tvb(0x05, 1))
  ft:add(f.flag_sync, tvb(0x05, 1))
  tree:add_le(f.seq, tvb(0x06, 2))
  tree:add_le(f.src_node, tvb(0x08, 2))
  local lt = tree:add_le(f.length, tvb(0x0a, 2))
  tree:add_le(f.addr, tvb(0x0c, 4))
  tree:add_le(f.event, tvb(0x10, 4))
  tree:add_le(f.cookie, tvb(0x14, 4))
  local payload = len - HEADER_SIZE - CRC_SIZE
  local length = tvb(0x0a, 2):le_uint()
  if length ~= payload then lt:add_proto_expert_info(e_len) end
  if payload > 0 then tree:add(f.payload, tvb(HEADER_SIZE, payload)) end
  local first, last = tvb(0x00, 2):le_uint(), tvb(0x02, 2):le_uint()
  local trans = tvb(0x04, 1):le_uint()
  pinfo.cols.src = tostring(tvb(0x08, 2):le_uint())
  pinfo.cols.dst = last == 0 and tostring(first) or string.format("%d-%d", first, last)
  pinfo.cols.info = string.format("%s seq=%d len=%d addr=0x%08x", trans_names[trans] or ("?" .. trans),
    tvb(0x06, 2):le_uint(), length, tvb(0x0c, 4):le_uint())
  add_crc(tvb, pinfo, tree, len)
end

function elan3.dissector(tvb, pinfo, root)
  pinfo.cols.protocol = "ELAN3"
  local len = tvb:captured_len()
  local tree = root:add(elan3, tvb(0, len))
  if len == ACK_SIZE then
    dissect_token(tvb, pinfo, tree)
  elseif len >= HEADER_SIZE + CRC_SIZE then
    dissect_packet(tvb, pinfo, tree, len)
  else
    tree:add_proto_expert_info(e_short)
  end
  return len
end

DissectorTable.get("wtap_encap"):add(wtap_encaps.USER1, elan3)
