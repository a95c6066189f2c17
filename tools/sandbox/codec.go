package sandbox

import (
	"errors"
	"fmt"
	"io"
	"reflect"
)

// The plan goes to the entry point, and its reports come back, in a small
// binary encoding rather than JSON: encoding/json builds its decoders with
// reflection on first use, which cost an entry point, a fresh process for
// every command, most of a millisecond of CPU. This one walks the values
// with reflect directly: every exported field of a struct, in order; bools,
// integers (varints), strings, slices (nil kept apart from empty), structs
// and pointers. Both ends are the same binary, so the layout needs no
// names and no versions.

// writeMsg writes v (a value or a pointer to it) as one message: its
// length, then its encoding.
func writeMsg(w io.Writer, v any) error {
	body := encodeValue(nil, reflect.Indirect(reflect.ValueOf(v)))
	msg := appendUvarint(make([]byte, 0, len(body)+5), uint64(len(body)))
	_, err := w.Write(append(msg, body...))
	return err
}

// maxMsg bounds a message: a plan is a few kilobytes.
const maxMsg = 16 << 20

// readMsg reads one message into the pointer v.
func readMsg(r io.Reader, v any) error {
	var n uint64
	var shift uint
	b := make([]byte, 1)
	for {
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		n |= uint64(b[0]&0x7f) << shift
		if b[0] < 0x80 {
			break
		}
		if shift += 7; shift > 63 {
			return errors.New("bad message length")
		}
	}
	if n > maxMsg {
		return fmt.Errorf("message of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	d := decoder{b: body}
	d.value(reflect.ValueOf(v).Elem())
	if d.err == nil && len(d.b) > 0 {
		d.err = errors.New("trailing bytes")
	}
	return d.err
}

func appendUvarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func encodeValue(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := v.Int()
		return appendUvarint(b, uint64(x<<1)^uint64(x>>63))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return appendUvarint(b, v.Uint())
	case reflect.String:
		b = appendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Slice:
		if v.IsNil() {
			return append(b, 0)
		}
		b = appendUvarint(b, uint64(v.Len())+1)
		for i := range v.Len() {
			b = encodeValue(b, v.Index(i))
		}
		return b
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return encodeValue(append(b, 1), v.Elem())
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				b = encodeValue(b, v.Field(i))
			}
		}
		return b
	}
	panic("sandbox: cannot encode a " + v.Type().String())
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	var shift uint
	for i, c := range d.b {
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			d.b = d.b[i+1:]
			return x
		}
		if shift += 7; shift > 63 {
			break
		}
	}
	d.fail()
	return 0
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("truncated or malformed message")
	}
	d.b = nil
}

// length reads a length that cannot exceed what is left.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) value(v reflect.Value) {
	if d.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(d.uvarint() != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		u := d.uvarint()
		v.SetInt(int64(u>>1) ^ -int64(u&1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(d.uvarint())
	case reflect.String:
		n := d.length()
		if d.err == nil {
			v.SetString(string(d.b[:n]))
			d.b = d.b[n:]
		}
	case reflect.Slice:
		n := d.uvarint()
		if n == 0 || d.err != nil {
			v.SetZero()
			return
		}
		if n-1 > uint64(len(d.b)) { // every element takes a byte at least
			d.fail()
			return
		}
		s := reflect.MakeSlice(v.Type(), int(n-1), int(n-1))
		for i := range int(n - 1) {
			d.value(s.Index(i))
		}
		v.Set(s)
	case reflect.Pointer:
		if d.uvarint() == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		d.value(p.Elem())
		v.Set(p)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				d.value(v.Field(i))
			}
		}
	default:
		d.err = errors.New("sandbox: cannot decode a " + v.Type().String())
	}
}
