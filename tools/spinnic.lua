-- SPDX-License-Identifier: BSD-3-Clause
-- Wireshark / tshark dissector for the spinnic wire format (DESIGN §5,
-- lib/portals/wire.h): Ethernet + IPv4 + UDP (default port 5777), then a
-- 112-byte spinnic header in network byte order, then the payload; an
-- authenticated frame (flag AUTH, spinnic --wire-key) ends in a 24-byte
-- trailer: a 64-bit frame counter and a 16-byte AES-256-GMAC tag, shown
-- but not checked (the dissector has no key).
--
--   wireshark -X lua_script:tools/spinnic.lua capture.pcap
--   tshark -X lua_script:tools/spinnic.lua -r capture.pcap -V
--   tshark ... -o spinnic.udp_port:6000     (spinnic --udp-port 6000)
--
-- Or copy it to ~/.local/lib/wireshark/plugins/. Field names are those of
-- struct spinnic_pkt ("spinnic.msg_id", "spinnic.match_bits", ...), so
-- display filters read like the C: spinnic.type == 1 && spinnic.flags.header.
-- Nothing is dropped: a field the parser would reject is still shown, with
-- an expert note saying why spinnic_wire_parse() would drop the packet.

local SPIN_LEN = 112
local DEFAULT_PORT = 5777

local p_spin = Proto("spinnic", "spinnic sPIN NIC")

-- enum spinnic_wire_type
local types = { [1] = "DATA", [2] = "REPLY", [3] = "ACK", [4] = "NACK",
		[5] = "GET", [6] = "TACK", [7] = "CHAL", [8] = "CHAL_ACK" }
-- enum spinnic_wire_op
local ops = { [1] = "PUT", [2] = "GET", [3] = "ATOMIC", [4] = "FETCH_ATOMIC",
	      [5] = "SWAP" }
-- SPINNIC_PTL_*_ACK_REQ
local ack_reqs = { [0] = "NO_ACK_REQ", [1] = "ACK_REQ", [2] = "CT_ACK_REQ",
		   [3] = "OC_ACK_REQ" }
-- SPINNIC_PTL_NI_* fail types
local fails = { [0] = "NI_OK", [1] = "NI_UNDELIVERABLE",
		[2] = "NI_PT_DISABLED", [3] = "NI_DROPPED",
		[4] = "NI_PERM_VIOLATION", [5] = "NI_OP_VIOLATION",
		[6] = "NI_SEGV", [7] = "NI_NO_MATCH" }
-- ptl_op_t (portals4.h)
local aops = { [0] = "PTL_MIN", [1] = "PTL_MAX", [2] = "PTL_SUM",
	       [3] = "PTL_PROD", [4] = "PTL_LOR", [5] = "PTL_LAND",
	       [6] = "PTL_BOR", [7] = "PTL_BAND", [8] = "PTL_LXOR",
	       [9] = "PTL_BXOR", [10] = "PTL_SWAP", [11] = "PTL_CSWAP",
	       [12] = "PTL_CSWAP_NE", [13] = "PTL_CSWAP_LE",
	       [14] = "PTL_CSWAP_LT", [15] = "PTL_CSWAP_GE",
	       [16] = "PTL_CSWAP_GT", [17] = "PTL_MSWAP" }
-- ptl_datatype_t (portals4.h)
local atypes = { [0] = "PTL_INT8_T", [1] = "PTL_UINT8_T", [2] = "PTL_INT16_T",
		 [3] = "PTL_UINT16_T", [4] = "PTL_INT32_T",
		 [5] = "PTL_UINT32_T", [6] = "PTL_INT64_T",
		 [7] = "PTL_UINT64_T", [8] = "PTL_FLOAT",
		 [9] = "PTL_FLOAT_COMPLEX", [10] = "PTL_DOUBLE",
		 [11] = "PTL_DOUBLE_COMPLEX", [12] = "PTL_LONG_DOUBLE",
		 [13] = "PTL_LONG_DOUBLE_COMPLEX" }

local F_HEADER, F_PAYLOAD, F_COMPLETION, F_REL, F_AUTH = 1, 2, 4, 8, 16
local AUTH_LEN = 24
local NI_NO_MATCHING, NI_LOGICAL = 1, 2

local f = {
	version = ProtoField.uint8("spinnic.version", "Version", base.DEC),
	type = ProtoField.uint8("spinnic.type", "Type", base.DEC, types),
	flags = ProtoField.uint8("spinnic.flags", "Flags", base.HEX),
	f_header = ProtoField.bool("spinnic.flags.header", "Header", 8,
		nil, F_HEADER),
	f_payload = ProtoField.bool("spinnic.flags.payload", "Payload", 8,
		nil, F_PAYLOAD),
	f_completion = ProtoField.bool("spinnic.flags.completion",
		"Completion", 8, nil, F_COMPLETION),
	f_rel = ProtoField.bool("spinnic.flags.rel", "Sequenced", 8, nil, F_REL),
	f_auth = ProtoField.bool("spinnic.flags.auth", "Authenticated", 8,
		nil, F_AUTH),
	op = ProtoField.uint8("spinnic.op", "Operation", base.DEC, ops),
	ack_req = ProtoField.uint8("spinnic.ack_req", "Ack request", base.DEC,
		ack_reqs),
	ni = ProtoField.uint8("spinnic.ni", "NI kind", base.HEX),
	ni_no_matching = ProtoField.bool("spinnic.ni.no_matching",
		"Non-matching", 8, nil, NI_NO_MATCHING),
	ni_logical = ProtoField.bool("spinnic.ni.logical", "Logical", 8,
		nil, NI_LOGICAL),
	fail_type = ProtoField.uint8("spinnic.fail_type", "Fail type",
		base.DEC, fails),
	atomic_op = ProtoField.uint8("spinnic.atomic_op", "Atomic operation",
		base.DEC, aops),
	atomic_type = ProtoField.uint8("spinnic.atomic_type", "Atomic type",
		base.DEC, atypes),
	reserved = ProtoField.bytes("spinnic.reserved", "Reserved"),
	src_nid = ProtoField.uint32("spinnic.src_nid", "Source nid", base.DEC),
	src_pid = ProtoField.uint32("spinnic.src_pid", "Source pid", base.DEC),
	dst_nid = ProtoField.uint32("spinnic.dst_nid", "Target nid", base.DEC),
	dst_pid = ProtoField.uint32("spinnic.dst_pid", "Target pid", base.DEC),
	pt_index = ProtoField.uint32("spinnic.pt_index", "Portal index",
		base.DEC),
	uid = ProtoField.uint32("spinnic.uid", "User id", base.DEC),
	pay_len = ProtoField.uint32("spinnic.pay_len", "Payload length",
		base.DEC),
	match_bits = ProtoField.uint64("spinnic.match_bits", "Match bits",
		base.HEX),
	hdr_data = ProtoField.uint64("spinnic.hdr_data", "Header data",
		base.HEX),
	msg_id = ProtoField.uint64("spinnic.msg_id", "Message id", base.HEX),
	msg_len = ProtoField.uint64("spinnic.msg_len", "Message length",
		base.DEC),
	offset = ProtoField.uint64("spinnic.offset", "Offset", base.DEC),
	remote_offset = ProtoField.uint64("spinnic.remote_offset",
		"Remote offset", base.DEC),
	mlength = ProtoField.uint64("spinnic.mlength", "Manipulated length",
		base.DEC),
	epoch = ProtoField.uint32("spinnic.epoch", "Epoch", base.HEX),
	seq = ProtoField.uint32("spinnic.seq", "Sequence", base.DEC),
	ack_epoch = ProtoField.uint32("spinnic.ack_epoch", "Acked epoch",
		base.HEX),
	ack_seq = ProtoField.uint32("spinnic.ack_seq", "Cumulative ack",
		base.DEC),
	sack_base = ProtoField.uint32("spinnic.sack_base",
		"Selective ack from", base.DEC),
	sack = ProtoField.uint64("spinnic.sack", "Selective ack", base.HEX),
	payload = ProtoField.bytes("spinnic.payload", "Payload"),
	payload_bytes = ProtoField.uint32("spinnic.payload_bytes",
		"Payload bytes in frame", base.DEC),
	auth_ctr = ProtoField.uint64("spinnic.auth_ctr",
		"Frame counter (GMAC IV: source nid, counter)", base.DEC),
	auth_tag = ProtoField.bytes("spinnic.auth_tag", "GMAC tag"),
}
p_spin.fields = {
	f.version, f.type, f.flags, f.f_header, f.f_payload, f.f_completion,
	f.f_rel, f.op, f.ack_req, f.ni, f.ni_no_matching, f.ni_logical, f.fail_type,
	f.atomic_op, f.atomic_type, f.reserved, f.src_nid, f.src_pid,
	f.dst_nid, f.dst_pid, f.pt_index, f.uid, f.pay_len, f.match_bits,
	f.hdr_data, f.msg_id, f.msg_len, f.offset, f.remote_offset, f.mlength,
	f.epoch, f.seq, f.ack_epoch, f.ack_seq, f.sack_base, f.sack, f.payload,
	f.payload_bytes, f.f_auth, f.auth_ctr, f.auth_tag,
}

local ef = {
	short = ProtoExpert.new("spinnic.short", "Shorter than the spinnic header",
		expert.group.MALFORMED, expert.severity.ERROR),
	version = ProtoExpert.new("spinnic.bad_version", "Unknown version",
		expert.group.MALFORMED, expert.severity.ERROR),
	kind = ProtoExpert.new("spinnic.bad_kind",
		"Unknown type or flag combination (parser drops: kind)",
		expert.group.MALFORMED, expert.severity.ERROR),
	op = ProtoExpert.new("spinnic.bad_op",
		"Unknown operation, ack request, NI kind or fail type (parser drops: op)",
		expert.group.MALFORMED, expert.severity.ERROR),
	pay_len = ProtoExpert.new("spinnic.bad_pay_len",
		"Payload length does not match the bytes in the frame (parser drops: pay_len)",
		expert.group.MALFORMED, expert.severity.ERROR),
	offset = ProtoExpert.new("spinnic.bad_offset",
		"Offset/length inconsistent with the message (parser drops: offset)",
		expert.group.MALFORMED, expert.severity.ERROR),
	auth = ProtoExpert.new("spinnic.bad_auth",
		"Authentication trailer shorter than 24 bytes (keyed parser drops: auth)",
		expert.group.MALFORMED, expert.severity.ERROR),
}
p_spin.experts = { ef.short, ef.version, ef.kind, ef.op, ef.pay_len,
		   ef.offset, ef.auth }

p_spin.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
	"UDP destination port of spinnic packets (spinnic --udp-port)")

local function flag_str(flags)
	local s = {}
	if bit.band(flags, F_HEADER) ~= 0 then s[#s + 1] = "H" end
	if bit.band(flags, F_PAYLOAD) ~= 0 then s[#s + 1] = "P" end
	if bit.band(flags, F_COMPLETION) ~= 0 then s[#s + 1] = "C" end
	local rest = bit.band(flags, bit.bnot(15 + F_AUTH))
	if rest ~= 0 then s[#s + 1] = string.format("0x%02x", rest) end
	if #s == 0 then return "-" end
	return table.concat(s, "|")
end

local function name_of(tbl, v)
	return tbl[v] or string.format("unknown(%d)", v)
end

-- same rules as kind_valid() in lib/portals/wire.c (AUTH: as a keyed
-- node parses it)
local function kind_valid(t, flags)
	-- the session handshake: never sequenced
	if t == 7 or t == 8 then
		return bit.band(flags, bit.bnot(F_AUTH)) == 0
	end
	flags = bit.band(flags, bit.bnot(F_REL + F_AUTH))
	if t == 1 or t == 2 then
		return flags == F_HEADER or flags == F_PAYLOAD or
		       flags == F_COMPLETION or
		       flags == F_HEADER + F_COMPLETION
	elseif t == 5 then
		return flags == F_HEADER + F_COMPLETION
	elseif t == 3 or t == 4 or t == 6 then
		return flags == 0
	end
	return false
end

function p_spin.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "spinnic"
	local t = tree:add(p_spin, tvb(), "spinnic")
	if len < SPIN_LEN then
		t:add_proto_expert_info(ef.short, string.format(
			"%d bytes, the spinnic header is %d", len, SPIN_LEN))
		pinfo.cols.info = string.format("spinnic short (%d bytes)", len)
		return len
	end

	local version = tvb(0, 1):uint()
	local ptype = tvb(1, 1):uint()
	local flags = tvb(2, 1):uint()
	local op = tvb(3, 1):uint()
	local ack_req = tvb(4, 1):uint()
	local ni = tvb(5, 1):uint()
	local fail = tvb(6, 1):uint()
	local pay_len = tvb(36, 4):uint()
	local msg_id = tvb(56, 8):uint64()
	local msg_len = tvb(64, 8):uint64()
	local offset = tvb(72, 8):uint64()
	local avail = len - SPIN_LEN
	local auth = bit.band(flags, F_AUTH) ~= 0
	if auth then avail = avail - AUTH_LEN end

	local vi = t:add(f.version, tvb(0, 1))
	if version ~= 1 then vi:add_proto_expert_info(ef.version) end
	local ti = t:add(f.type, tvb(1, 1))
	local fi = t:add(f.flags, tvb(2, 1))
	fi:append_text(" (" .. flag_str(flags) .. ")")
	fi:add(f.f_header, tvb(2, 1))
	fi:add(f.f_payload, tvb(2, 1))
	fi:add(f.f_completion, tvb(2, 1))
	fi:add(f.f_rel, tvb(2, 1))
	fi:add(f.f_auth, tvb(2, 1))
	if not kind_valid(ptype, flags) then
		ti:add_proto_expert_info(ef.kind)
	end
	local oi = t:add(f.op, tvb(3, 1))
	local ai = t:add(f.ack_req, tvb(4, 1))
	local ni_i = t:add(f.ni, tvb(5, 1))
	ni_i:add(f.ni_no_matching, tvb(5, 1))
	ni_i:add(f.ni_logical, tvb(5, 1))
	local fti = t:add(f.fail_type, tvb(6, 1))
	if ptype >= 6 and ptype <= 8 then
		if op ~= 0 or ack_req ~= 0 or ni ~= 0 then
			oi:add_proto_expert_info(ef.op)
		end
	elseif op == 0 or op > 5 or (ptype == 5 and op ~= 2) or
	   (ptype == 1 and op == 2) then
		oi:add_proto_expert_info(ef.op)
	end
	if ack_req > 3 then ai:add_proto_expert_info(ef.op) end
	if ni > 3 then ni_i:add_proto_expert_info(ef.op) end
	if fail > 7 then fti:add_proto_expert_info(ef.op) end
	t:add(f.atomic_op, tvb(7, 1))
	t:add(f.atomic_type, tvb(8, 1))
	t:add(f.reserved, tvb(9, 3))
	t:add(f.src_nid, tvb(12, 4))
	t:add(f.src_pid, tvb(16, 4))
	t:add(f.dst_nid, tvb(20, 4))
	t:add(f.dst_pid, tvb(24, 4))
	t:add(f.pt_index, tvb(28, 4))
	t:add(f.uid, tvb(32, 4))
	local pi = t:add(f.pay_len, tvb(36, 4))
	if ptype ~= 6 then
		t:add(f.match_bits, tvb(40, 8))
	end
	t:add(f.hdr_data, tvb(48, 8))
	if ptype ~= 6 then
		t:add(f.msg_id, tvb(56, 8))
	end
	t:add(f.msg_len, tvb(64, 8))
	local offi = t:add(f.offset, tvb(72, 8))
	t:add(f.remote_offset, tvb(80, 8))
	t:add(f.mlength, tvb(88, 8))
	t:add(f.epoch, tvb(96, 4))
	t:add(f.seq, tvb(104, 4))
	t:add(f.ack_epoch, tvb(100, 4))
	t:add(f.ack_seq, tvb(108, 4))
	if ptype == 6 then
		-- a transport ack's selective ack rides in the msg_id (base)
		-- and match slots
		t:add(f.sack_base, tvb(60, 4))
		t:add(f.sack, tvb(40, 8))
	end
	if auth and avail < 0 then
		fi:add_proto_expert_info(ef.auth, string.format(
			"%d bytes after the header, the trailer alone is %d",
			len - SPIN_LEN, AUTH_LEN))
		avail = len - SPIN_LEN
		auth = false
	end
	t:add(f.payload_bytes, avail):set_generated()
	if avail > 0 then
		t:add(f.payload, tvb(SPIN_LEN, avail))
	end
	if auth then
		t:add(f.auth_ctr, tvb(SPIN_LEN + avail, 8))
		t:add(f.auth_tag, tvb(SPIN_LEN + avail + 8, 16))
	end

	-- the parser's length and offset rules (spinnic_wire_parse)
	if pay_len ~= avail then
		pi:add_proto_expert_info(ef.pay_len, string.format(
			"pay_len %d, %d bytes after the header", pay_len, avail))
	end
	local pl = UInt64(pay_len)
	if ptype == 1 or ptype == 2 then
		if offset > msg_len or pl > msg_len - offset or
		   (bit.band(flags, F_HEADER) ~= 0 and offset ~= UInt64(0)) or
		   (bit.band(flags, F_COMPLETION) ~= 0 and
		    offset + pl ~= msg_len) then
			offi:add_proto_expert_info(ef.offset)
		end
	elseif offset ~= UInt64(0) then
		offi:add_proto_expert_info(ef.offset)
	end

	local tname = name_of(types, ptype)
	local oname = name_of(ops, op)
	local info
	if ptype == 1 or ptype == 2 then
		-- "PUT H|C msg 0x12 off 0 len 2048 pt 0 mb 0x..." (REPLY: "REPLY GET ...")
		info = string.format("%s%s %s msg 0x%s off %s len %d pt %d mb 0x%s",
			ptype == 2 and "REPLY " or "", oname, flag_str(flags),
			msg_id:tohex():gsub("^0+(.)", "%1"), tostring(offset),
			pay_len, tvb(28, 4):uint(), tvb(40, 8):uint64():tohex())
	elseif ptype == 5 then
		info = string.format("GET msg 0x%s len %s pt %d mb 0x%s roff %s",
			msg_id:tohex():gsub("^0+(.)", "%1"), tostring(msg_len),
			tvb(28, 4):uint(), tvb(40, 8):uint64():tohex(),
			tostring(tvb(80, 8):uint64()))
	elseif ptype == 7 then
		info = string.format("CHAL epoch 0x%x cookie 0x%s",
			tvb(100, 4):uint(), tvb(48, 8):uint64():tohex())
	elseif ptype == 8 then
		info = string.format("CHAL_ACK epoch 0x%x from seq %d cookie 0x%s",
			tvb(100, 4):uint(), tvb(108, 4):uint(),
			tvb(48, 8):uint64():tohex())
	elseif ptype == 6 then
		if bit.band(flags, F_REL) ~= 0 then
			info = string.format("TACK probe seq %d", tvb(104, 4):uint())
		else
			info = string.format("TACK ack %d epoch 0x%x sack %d+0x%s",
				tvb(108, 4):uint(), tvb(100, 4):uint(),
				tvb(60, 4):uint(), tvb(40, 8):uint64():tohex())
		end
	else
		info = string.format("%s %s msg 0x%s mlength %s %s", tname, oname,
			msg_id:tohex():gsub("^0+(.)", "%1"),
			tostring(tvb(88, 8):uint64()), name_of(fails, fail))
	end
	info = string.format("%s  %d:%d -> %d:%d seq %d ack %d", info,
		tvb(12, 4):uint(), tvb(16, 4):uint(), tvb(20, 4):uint(),
		tvb(24, 4):uint(), tvb(104, 4):uint(), tvb(108, 4):uint())
	if auth then
		info = string.format("%s [auth ctr %s]", info,
			tostring(tvb(SPIN_LEN + avail, 8):uint64()))
	end
	pinfo.cols.info = info
	t:append_text(string.format(", %s %s %s", tname, flag_str(flags), oname))
	return len
end

local registered_port = nil

local function register_port()
	local udp = DissectorTable.get("udp.port")
	if registered_port ~= nil then
		udp:remove(registered_port, p_spin)
	end
	registered_port = p_spin.prefs.udp_port
	udp:add(registered_port, p_spin)
end

function p_spin.prefs_changed()
	if registered_port ~= p_spin.prefs.udp_port then
		register_port()
	end
end

register_port()
