package jsonkeep

import (
	"bytes"
	"strconv"
)

// Probe reads a few values of a JSON document and checks the syntax of the
// rest as it skips it, without decoding it: faster than Decode when most of
// a document is not wanted. Each method reports false at a syntax error, or
// at a value in a form it does not take; the Probe is then spent. What a
// Probe takes, Decode takes too.
type Probe struct{ s scanner }

// NewProbe returns a Probe at the start of data.
func NewProbe(data []byte) *Probe { return &Probe{scanner{data: data}} }

// Object reads an object, calling member with each key and the Probe at
// its value, which member reads or skips. A key with an escape, or with
// white space at its ends (which Decode reports when it names a field), is
// not taken.
func (p *Probe) Object(member func(key []byte) bool) bool {
	s := &p.s
	if s.ws(); !s.expect('{') {
		return false
	}
	if s.depth++; s.depth > maxDepth {
		return false
	}
	if s.ws(); s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return true
	}
	for {
		raw := s.rawKey()
		if s.err != nil || !s.colon() {
			return false
		}
		key := raw[1 : len(raw)-1]
		if bytes.IndexByte(key, '\\') >= 0 || len(bytes.TrimSpace(key)) < len(key) || !member(key) {
			return false
		}
		if s.ws(); s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		s.depth--
		return s.expect('}')
	}
}

// Skip skips a value.
func (p *Probe) Skip() bool {
	p.s.value()
	return p.s.err == nil
}

// Null reads a null, if one is next.
func (p *Probe) Null() bool {
	if p.s.isNull() {
		p.s.pos += 4
		return true
	}
	return false
}

// Int reads an integer as Decode does into an int: a number, or a string
// of one; "" and null as 0.
func (p *Probe) Int(n *int) bool {
	if p.Null() {
		*n = 0
		return true
	}
	raw := p.s.value()
	if p.s.err != nil || raw[0] != '"' && raw[0] != '-' && !isDigit(raw[0]) {
		return false
	}
	v, err := parseInt(raw, strconv.IntSize)
	*n = int(v)
	return err == nil
}

// String reads a string and returns it as written, quotes included.
func (p *Probe) String() ([]byte, bool) {
	if p.s.pos >= len(p.s.data) || p.s.data[p.s.pos] != '"' {
		return nil, false
	}
	raw := p.s.value()
	return raw, p.s.err == nil
}

// End reports whether only white space is left.
func (p *Probe) End() bool {
	p.s.ws()
	return p.s.err == nil && p.s.pos == len(p.s.data)
}
