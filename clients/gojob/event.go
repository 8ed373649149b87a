// The event lines' builder, shared by the Go drivers (build.sh copies this
// directory beside each driver's sources): {"event":NAME,...} member by
// member, each text cut to kTextBytesMax bytes; Line stamps t_us with the
// driver's own nowUs.
package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

const kTextBytesMax = 4096 // a longer "text" is cut

// cut shortens text to kTextBytesMax bytes, not inside a UTF-8 sequence.
func cut(text string) string {
	if len(text) <= kTextBytesMax {
		return text
	}
	end := kTextBytesMax
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	return text[:end]
}

// Event is one line, built member by member: {"event":NAME,...}.
type Event struct{ b strings.Builder }

func quote(s string) string {
	q, err := json.Marshal(s) // RFC 8259; invalid UTF-8 becomes U+FFFD
	if err != nil {
		panic(err)
	}
	return string(q)
}

func NewEvent(name string) *Event {
	e := &Event{}
	e.b.WriteString(`{"event":` + quote(name))
	return e
}
func (e *Event) key(k string) { e.b.WriteString("," + quote(k) + ":") }
func (e *Event) Int(k string, v int64) *Event {
	e.key(k)
	e.b.WriteString(strconv.FormatInt(v, 10))
	return e
}
func (e *Event) Str(k, v string) *Event {
	e.key(k)
	e.b.WriteString(quote(cut(v)))
	return e
}
func (e *Event) Bool(k string, v bool) *Event {
	e.key(k)
	e.b.WriteString(strconv.FormatBool(v))
	return e
}
func (e *Event) Null(k string) *Event {
	e.key(k)
	e.b.WriteString("null")
	return e
}

// Line stamps t_us now and gives the finished line with its newline.
func (e *Event) Line() []byte {
	e.Int("t_us", nowUs())
	return []byte(e.b.String() + "}\n")
}
