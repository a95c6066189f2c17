package sandbox

import (
	"bytes"
	"reflect"
	"testing"
)

// fill sets every field reachable from v to a value other than its zero.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(*n) * 1000003)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n) * 131)
	case reflect.String:
		v.SetString("s\x00é" + string(rune('a'+*n%26)))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), n)
		fill(s.Index(1), n)
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	}
}

// Every field of the plan and of the reports crosses to the entry point
// and back (a field the codec could not carry fails here), nil slices stay
// nil (a nil list of socket families means no socket filter), and a
// truncated message is an error.
func TestCodecCarriesEveryField(t *testing.T) {
	for _, v := range []any{&plan{}, &report{}} {
		n := 0
		fill(reflect.ValueOf(v).Elem(), &n)
		var buf bytes.Buffer
		if err := writeMsg(&buf, reflect.ValueOf(v).Elem().Interface()); err != nil {
			t.Fatal(err)
		}
		raw := buf.Bytes()
		got := reflect.New(reflect.TypeOf(v).Elem())
		if err := readMsg(bytes.NewReader(raw), got.Interface()); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Interface(), v) {
			t.Errorf("%T changed on the way:\n%+v\n%+v", v, got.Elem().Interface(), reflect.ValueOf(v).Elem().Interface())
		}
		if err := readMsg(bytes.NewReader(raw[:len(raw)-1]), reflect.New(reflect.TypeOf(v).Elem()).Interface()); err == nil {
			t.Errorf("a truncated %T was read", v)
		}
	}
	var buf bytes.Buffer
	if err := writeMsg(&buf, plan{Families: []uint32{}}); err != nil {
		t.Fatal(err)
	}
	var p plan
	if err := readMsg(&buf, &p); err != nil || p.Families == nil || p.Rules != nil {
		t.Errorf("empty and nil slices: %v %#v %#v", err, p.Families, p.Rules)
	}
}
