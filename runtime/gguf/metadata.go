package gguf

import (
	"fmt"
	"math"
)

// Has reports whether key is present.
func (f *File) Has(key string) bool { _, ok := f.kvIndex[key]; return ok }

// Get returns the raw value of key.
func (f *File) Get(key string) (any, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return nil, false
	}
	return f.KVs[i].Value, true
}

func (f *File) typeErr(key, want string, v any) error {
	return &FormatError{f.Path, fmt.Sprintf("key %q", key), fmt.Sprintf("must be %s, found %s", want, describe(v))}
}

// describe names a value's GGUF type the way the format does ("uint8", "an
// array of string"), not as a Go type ("gguf.Array"), for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case Array:
		return "an array of " + x.Elem.String()
	case uint8:
		return TypeUint8.String()
	case int8:
		return TypeInt8.String()
	case uint16:
		return TypeUint16.String()
	case int16:
		return TypeInt16.String()
	case uint32:
		return TypeUint32.String()
	case int32:
		return TypeInt32.String()
	case float32:
		return TypeFloat32.String()
	case bool:
		return TypeBool.String()
	case string:
		return "a string"
	case uint64:
		return TypeUint64.String()
	case int64:
		return TypeInt64.String()
	case float64:
		return TypeFloat64.String()
	}
	return fmt.Sprintf("%T", v)
}

func (f *File) missing(key string) error {
	return &FormatError{f.Path, fmt.Sprintf("key %q", key), "missing"}
}

// String returns a string value; ok is false when the key is absent.
func (f *File) String(key string) (s string, ok bool, err error) {
	v, ok := f.Get(key)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, f.typeErr(key, "a string", v)
	}
	return s, true, nil
}

// Uint returns any non-negative integer value as uint64.
func (f *File) Uint(key string) (n uint64, ok bool, err error) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false, nil
	}
	switch x := v.(type) {
	case uint8:
		return uint64(x), true, nil
	case uint16:
		return uint64(x), true, nil
	case uint32:
		return uint64(x), true, nil
	case uint64:
		return x, true, nil
	case int8, int16, int32, int64:
		i := toInt64(x)
		if i < 0 {
			return 0, true, &FormatError{f.Path, fmt.Sprintf("key %q", key), fmt.Sprintf("must not be negative, found %d", i)}
		}
		return uint64(i), true, nil
	}
	return 0, true, f.typeErr(key, "an integer", v)
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// Float returns any numeric value as float64.
func (f *File) Float(key string) (x float64, ok bool, err error) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false, nil
	}
	switch y := v.(type) {
	case float32:
		return float64(y), true, nil
	case float64:
		return y, true, nil
	}
	if n, _, err := f.Uint(key); err == nil {
		return float64(n), true, nil
	}
	if i := toInt64(v); i != 0 {
		return float64(i), true, nil
	}
	return 0, true, f.typeErr(key, "a number", v)
}

// Bool returns a bool value.
func (f *File) Bool(key string) (b bool, ok bool, err error) {
	v, ok := f.Get(key)
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, f.typeErr(key, "a bool", v)
	}
	return b, true, nil
}

// Array returns an array value.
func (f *File) Array(key string) (a Array, ok bool, err error) {
	v, ok := f.Get(key)
	if !ok {
		return Array{}, false, nil
	}
	a, isArr := v.(Array)
	if !isArr {
		return Array{}, true, f.typeErr(key, "an array", v)
	}
	return a, true, nil
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, bool, error) {
	a, ok, err := f.Array(key)
	if !ok || err != nil {
		return nil, ok, err
	}
	s, isStr := a.Values.([]string)
	if !isStr {
		return nil, true, &FormatError{f.Path, fmt.Sprintf("key %q", key), fmt.Sprintf("must be an array of strings, found an array of %s", a.Elem)}
	}
	return s, true, nil
}

// Float32s returns an array of float32 values.
func (f *File) Float32s(key string) ([]float32, bool, error) {
	a, ok, err := f.Array(key)
	if !ok || err != nil {
		return nil, ok, err
	}
	s, isF := a.Values.([]float32)
	if !isF {
		return nil, true, &FormatError{f.Path, fmt.Sprintf("key %q", key), fmt.Sprintf("must be an array of float32, found an array of %s", a.Elem)}
	}
	return s, true, nil
}

// Int32s returns an array of 32-bit integers (signed or unsigned storage). An
// unsigned value above MaxInt32 is an error rather than a silent wrap to a
// negative number that a caller might use as an index.
func (f *File) Int32s(key string) ([]int32, bool, error) {
	a, ok, err := f.Array(key)
	if !ok || err != nil {
		return nil, ok, err
	}
	switch v := a.Values.(type) {
	case []int32:
		return v, true, nil
	case []uint32:
		out := make([]int32, len(v))
		for i, x := range v {
			if x > math.MaxInt32 {
				return nil, true, &FormatError{f.Path, fmt.Sprintf("key %q", key), fmt.Sprintf("element %d: %d does not fit in int32", i, x)}
			}
			out[i] = int32(x)
		}
		return out, true, nil
	}
	return nil, true, &FormatError{f.Path, fmt.Sprintf("key %q", key), fmt.Sprintf("must be an array of int32, found an array of %s", a.Elem)}
}

// RequireUint is Uint for keys that must be present.
func (f *File) RequireUint(key string) (uint64, error) {
	n, ok, err := f.Uint(key)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, f.missing(key)
	}
	return n, nil
}

// Architecture is general.architecture.
func (f *File) Architecture() (string, error) {
	s, ok, err := f.String("general.architecture")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", f.missing("general.architecture")
	}
	return s, nil
}
