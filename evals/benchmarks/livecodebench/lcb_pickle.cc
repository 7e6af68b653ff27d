#include "evals/benchmarks/livecodebench/lcb_pickle.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>

namespace evalrun {

namespace {

int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string Hex(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", c);
  return buf;
}

uint64_t LittleEndian(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

const char* OpcodeName(unsigned char op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'V': return "UNICODE";
    case 'U': return "SHORT_BINSTRING";
    case 'T': return "BINSTRING";
    case 'S': return "STRING";
    case ']': return "EMPTY_LIST";
    case '}': return "EMPTY_DICT";
    case ')': return "EMPTY_TUPLE";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'N': return "NONE";
    case 'h': return "BINGET";
    case 'j': return "LONG_BINGET";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    default: return "an opcode";
  }
}

}  // namespace

Status DecodeBase64(std::string_view text, std::string* out) {
  out->clear();
  out->reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0, chars = 0, pad = 0;
  for (unsigned char c : text) {
    if (c == '=') {
      // Padding counts only where the group needs it; it ends the data once
      // the group is complete (binascii's non-strict mode).
      if (chars % 4 >= 2 && ++pad + chars % 4 >= 4) break;
      continue;
    }
    int v = Base64Value(c);
    if (v < 0) continue;
    if (pad > 0) pad = 0;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    ++chars;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (chars % 4 == 1)
    return Status::InvalidInput("base64: invalid input: " + std::to_string(chars) +
                                " data characters cannot be 1 more than a multiple of 4");
  if (chars % 4 != 0 && pad + chars % 4 < 4) return Status::InvalidInput("base64: Incorrect padding");
  return Status::Ok();
}

Status InflateZlib(std::string_view data, std::string* out, size_t max_bytes) {
  out->clear();
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return Status::Internal("zlib: inflateInit failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());  // fields are far below 4 GiB compressed
  if (data.size() > UINT32_MAX) {
    inflateEnd(&zs);
    return Status::InvalidInput("zlib: compressed field over 4 GiB");
  }
  int rc = Z_OK;
  char buf[1 << 16];
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out->append(buf, sizeof buf - zs.avail_out);
    if (out->size() > max_bytes) {
      inflateEnd(&zs);
      return Status::InvalidInput("zlib: decompressed data over " + std::to_string(max_bytes) + " bytes");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) rc = Z_BUF_ERROR;
  }
  size_t left = zs.avail_in;
  std::string msg = zs.msg ? zs.msg : "";
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return Status::InvalidInput("zlib: " + (msg.empty() ? std::string("truncated or corrupt stream") : msg) +
                                " after " + std::to_string(data.size() - left) + " of " +
                                std::to_string(data.size()) + " bytes");
  if (left != 0) return Status::InvalidInput("zlib: " + std::to_string(left) + " bytes after the end of the stream");
  return Status::Ok();
}

Status ReadPickledStr(std::string_view data, std::string* out) {
  out->clear();
  size_t pos = 0;
  int strings = 0;  // values on the stack (only strs can get there)
  auto fail = [&](size_t at, const std::string& what) {
    return Status::InvalidInput("pickle: " + what + " at byte " + std::to_string(at) +
                                " (private_test_cases must be a pickled str)");
  };
  auto take = [&](size_t n, std::string_view* v) {
    if (data.size() - pos < n) return false;
    *v = data.substr(pos, n);
    pos += n;
    return true;
  };
  while (pos < data.size()) {
    const size_t at = pos;
    const unsigned char op = static_cast<unsigned char>(data[pos++]);
    std::string_view arg;
    size_t len_bytes = 0;
    switch (op) {
      case 0x80:  // PROTO n
        if (!take(1, &arg)) return fail(at, "PROTO without its argument");
        if (static_cast<unsigned char>(arg[0]) < 2 || static_cast<unsigned char>(arg[0]) > 5)
          return fail(at, "protocol " + std::to_string(static_cast<unsigned char>(arg[0])) + " (expected 2 to 5)");
        continue;
      case 0x95:  // FRAME: an 8-byte length; the opcodes inside are read as usual
        if (!take(8, &arg)) return fail(at, "FRAME without its length");
        if (LittleEndian(arg) > data.size() - pos) return fail(at, "FRAME longer than the data");
        continue;
      case 0x94:  // MEMOIZE
        if (strings == 0) return fail(at, "MEMOIZE with an empty stack");
        continue;
      case 'q':  // BINPUT
      case 'r':  // LONG_BINPUT
        if (!take(op == 'q' ? 1 : 4, &arg)) return fail(at, "BINPUT without its argument");
        if (strings == 0) return fail(at, "BINPUT with an empty stack");
        continue;
      case '.':  // STOP
        if (strings != 1) return fail(at, "STOP with " + std::to_string(strings) + " values on the stack");
        if (pos != data.size()) return fail(pos, std::to_string(data.size() - pos) + " bytes after STOP");
        return Status::Ok();
      case 0x8c: len_bytes = 1; break;  // SHORT_BINUNICODE
      case 'X': len_bytes = 4; break;   // BINUNICODE
      case 0x8d: len_bytes = 8; break;  // BINUNICODE8
      default:
        return fail(at, std::string("opcode ") + Hex(op) + " (" + OpcodeName(op) + ") not allowed");
    }
    if (!take(len_bytes, &arg)) return fail(at, "string length past the end");
    const uint64_t len = LittleEndian(arg);
    if (len > data.size() - pos) return fail(at, "string of " + std::to_string(len) + " bytes past the end");
    if (++strings > 1) return fail(at, "a second value (only one str is allowed)");
    take(static_cast<size_t>(len), &arg);
    out->assign(arg);
  }
  return fail(pos, "no STOP");
}

Status DecodeLcbPrivateTests(std::string_view field, std::string* json_text, size_t max_bytes) {
  std::string compressed, pickled;
  EVALRUN_RETURN_IF_ERROR(DecodeBase64(field, &compressed));
  EVALRUN_RETURN_IF_ERROR(InflateZlib(compressed, &pickled, max_bytes));
  compressed.clear();
  compressed.shrink_to_fit();
  return ReadPickledStr(pickled, json_text);
}

}  // namespace evalrun
