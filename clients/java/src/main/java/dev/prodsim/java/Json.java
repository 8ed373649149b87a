package dev.prodsim.java;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON as the protocol wants it (clients/README.md): integers only
 * (no fraction or exponent, no leading zero, within int64), RFC 8259
 * strings, each key once, nothing but whitespace after the value. Values are
 * Long, String, Boolean, null, List and LinkedHashMap (key order kept).
 */
final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    Json r = new Json(text);
    r.space();
    Object v = r.value(0);
    r.space();
    if (r.i != r.s.length()) r.fail("text after the value");
    return v;
  }

  private RuntimeException fail(String why) {
    throw new IllegalArgumentException("JSON: " + why + " at byte " + i);
  }

  private void space() {
    while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
  }

  private char peek() {
    if (i >= s.length()) fail("unexpected end");
    return s.charAt(i);
  }

  private Object value(int depth) {
    if (depth > 16) fail("nesting too deep");
    space();
    char c = peek();
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return string();
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
    if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
    if (s.startsWith("null", i)) { i += 4; return null; }
    throw fail("unexpected character");
  }

  private Map<String, Object> object(int depth) {
    Map<String, Object> out = new LinkedHashMap<>();
    i++;
    space();
    if (peek() == '}') { i++; return out; }
    for (;;) {
      space();
      if (peek() != '"') fail("want a key");
      String k = string();
      if (out.containsKey(k)) fail("key \"" + k + "\" twice");
      space();
      if (peek() != ':') fail("want ':'");
      i++;
      out.put(k, value(depth + 1));
      space();
      char c = peek();
      i++;
      if (c == '}') return out;
      if (c != ',') fail("want ',' or '}'");
    }
  }

  private List<Object> array(int depth) {
    List<Object> out = new ArrayList<>();
    i++;
    space();
    if (peek() == ']') { i++; return out; }
    for (;;) {
      out.add(value(depth + 1));
      space();
      char c = peek();
      i++;
      if (c == ']') return out;
      if (c != ',') fail("want ',' or ']'");
    }
  }

  private String string() {
    i++;
    StringBuilder b = new StringBuilder();
    for (;;) {
      char c = peek();
      i++;
      if (c == '"') return b.toString();
      if (c < 0x20) fail("raw control character in a string");
      if (c != '\\') { b.append(c); continue; }
      char e = peek();
      i++;
      switch (e) {
        case '"': b.append('"'); break;
        case '\\': b.append('\\'); break;
        case '/': b.append('/'); break;
        case 'b': b.append('\b'); break;
        case 'f': b.append('\f'); break;
        case 'n': b.append('\n'); break;
        case 'r': b.append('\r'); break;
        case 't': b.append('\t'); break;
        case 'u':
          if (i + 4 > s.length()) fail("bad \\u escape");
          try {
            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          } catch (NumberFormatException x) {
            fail("bad \\u escape");
          }
          i += 4;
          break;
        default: fail("bad escape");
      }
    }
  }

  private Long integer() {
    int start = i;
    if (peek() == '-') i++;
    if (i >= s.length() || !Character.isDigit(s.charAt(i))) fail("bad number");
    if (s.charAt(i) == '0') {
      i++;
    } else {
      while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') i++;
    }
    if (i < s.length() && ".eE0123456789".indexOf(s.charAt(i)) >= 0) fail("integers only");
    BigInteger v = new BigInteger(s.substring(start, i));
    if (v.bitLength() > 63) fail("integer outside int64");
    return v.longValue();
  }

  static String quote(String v) {
    StringBuilder b = new StringBuilder(v.length() + 2);
    b.append('"');
    for (int k = 0; k < v.length(); k++) {
      char c = v.charAt(k);
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }
}
