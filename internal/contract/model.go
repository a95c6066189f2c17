package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Contract is the protocol: its methods by direction, with their params
// and results, every type they use, the enumerations, the error codes and
// how each kind of input request is answered. Its JSON form is
// testdata/contract/protocol.json.
type Contract struct {
	ProtocolVersion int `json:"protocolVersion"`
	// Requests and Notifications are what an editor may send;
	// ServerNotifications and ServerRequests what the daemon sends.
	Requests            []string       `json:"requests"`
	Notifications       []string       `json:"notifications"`
	ServerNotifications []string       `json:"serverNotifications"`
	ServerRequests      []string       `json:"serverRequests"`
	ErrorCodes          map[string]int `json:"errorCodes"`
	// Kinds says how each input-request kind is answered.
	Kinds map[string]KindInfo `json:"kinds"`
	// Methods describe each method; Types and Enums what they use.
	Methods map[string]Method `json:"methods"`
	Types   map[string]Struct `json:"types"`
	Enums   map[string]Enum   `json:"enums"`
}

// KindInfo is how one kind of input request is answered.
type KindInfo struct {
	// Answer is the method that answers it: agent/reply or agent/confirm.
	Answer string `json:"answer"`
	// Secret: the answer is a secret (typed hidden, never shown again).
	Secret bool `json:"secret,omitempty"`
}

// Direction says who sends a method and whether it is answered.
type Direction string

// Directions.
const (
	Request            Direction = "request"
	Notification       Direction = "notification"
	ServerNotification Direction = "serverNotification"
	ServerRequest      Direction = "serverRequest"
)

// Method is one method of the protocol.
type Method struct {
	Direction Direction `json:"direction"`
	// Key names the method in the clients' tables: the Go constant's name
	// without "Method" (MethodRun: run in TypeScript and Lua,
	// MethodInputRequest: inputRequest, input_request).
	Key string `json:"key"`
	// OptIn: the daemon sends it only to an editor that declared it in
	// initialize (capabilities), so a client need not handle it.
	OptIn bool `json:"optIn,omitempty"`
	// Params is nil for a method without params; Result is nil for a
	// notification.
	Params *Type `json:"params,omitempty"`
	Result *Type `json:"result,omitempty"`
}

// Struct is a named object type.
type Struct struct {
	Doc    string  `json:"doc,omitempty"`
	Fields []Field `json:"fields"`
}

// Field is one member of an object.
type Field struct {
	Name     string `json:"name"`
	Type     Type   `json:"type"`
	Optional bool   `json:"optional,omitempty"`
	Doc      string `json:"doc,omitempty"`
}

// Enum is a named set of string values.
type Enum struct {
	Doc string `json:"doc,omitempty"`
	// List is the name of its list among the contract's lists
	// (promptKinds), which the clients' constants are named after.
	List   string   `json:"list"`
	Values []string `json:"values"`
}

// TypeKind is what a Type is.
type TypeKind string

// Type kinds.
const (
	KindString  TypeKind = "string"
	KindInteger TypeKind = "integer"
	KindNumber  TypeKind = "number"
	KindBoolean TypeKind = "boolean"
	KindAny     TypeKind = "any"
	KindNull    TypeKind = "null"
	KindArray   TypeKind = "array"
	KindMap     TypeKind = "map"    // an object with string keys, each value Of
	KindRef     TypeKind = "ref"    // a name in Types or Enums
	KindObject  TypeKind = "object" // an anonymous struct
	KindUnion   TypeKind = "union"  // one of Refs (a field tagged contract:"A|B")
)

// Type is a type expression. Its JSON form is a word for the plain kinds
// ("string", "integer", "number", "boolean", "any", "null") and an object
// for the others: {"array": T}, {"map": T}, {"ref": "Name"}, {"object":
// [fields]}, {"union": ["A", "B"]}; "nullable": true when null is sent too,
// "format": "date-time" for a time.
type Type struct {
	Kind     TypeKind
	Of       *Type
	Ref      string
	Refs     []string
	Fields   []Field
	Nullable bool
	Format   string
}

func (t Type) MarshalJSON() ([]byte, error) {
	if t.Of == nil && t.Ref == "" && t.Fields == nil && t.Refs == nil && !t.Nullable && t.Format == "" {
		return json.Marshal(string(t.Kind))
	}
	var b bytes.Buffer
	b.WriteByte('{')
	put := func(k string, v any) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		val, _ := json.Marshal(v)
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	switch t.Kind {
	case KindArray, KindMap:
		put(string(t.Kind), t.Of)
	case KindRef:
		put("ref", t.Ref)
	case KindObject:
		put("object", t.Fields)
	case KindUnion:
		put("union", t.Refs)
	default:
		put("type", string(t.Kind))
	}
	if t.Nullable {
		put("nullable", true)
	}
	if t.Format != "" {
		put("format", t.Format)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (t *Type) UnmarshalJSON(data []byte) error {
	var word string
	if json.Unmarshal(data, &word) == nil {
		*t = Type{Kind: TypeKind(word)}
		return nil
	}
	var o struct {
		Array    *Type    `json:"array"`
		Map      *Type    `json:"map"`
		Ref      string   `json:"ref"`
		Object   []Field  `json:"object"`
		Union    []string `json:"union"`
		Type     string   `json:"type"`
		Nullable bool     `json:"nullable"`
		Format   string   `json:"format"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return err
	}
	*t = Type{Nullable: o.Nullable, Format: o.Format}
	switch {
	case o.Array != nil:
		t.Kind, t.Of = KindArray, o.Array
	case o.Map != nil:
		t.Kind, t.Of = KindMap, o.Map
	case o.Ref != "":
		t.Kind, t.Ref = KindRef, o.Ref
	case o.Object != nil:
		t.Kind, t.Fields = KindObject, o.Object
	case o.Union != nil:
		t.Kind, t.Refs = KindUnion, o.Union
	case o.Type != "":
		t.Kind = TypeKind(o.Type)
	default:
		return fmt.Errorf("contract: a type with no kind: %s", data)
	}
	return nil
}
