package nn

import "reflect"

// HeldBytes measures the memory that vs hold: the bytes of every slice's
// backing array reachable from them through pointers, interfaces, structs,
// arrays, slices and maps, each array counted once at its full capacity
// (slices of one array share its end, whatever their start). After a
// forward and backward pass, a model holds its parameters, their
// gradients and the buffers its layers keep and reuse from pass to pass
// (activations, input gradients): what a training step occupies, measured
// rather than estimated.
//
// Struct fields tagged `held:"-"` are left out: per-worker scratch, whose
// size follows GOMAXPROCS. Leaving it out makes the measure depend only on
// the layers and the shapes of the batches they have seen, so that what is
// planned from it (train.MemoryBudget) is the same on any number of
// threads. Memory in sync.Pools and the runtime's own is not reachable
// from vs and not counted.
func HeldBytes(vs ...any) int64 {
	h := held{arrays: make(map[uintptr]int64), visited: make(map[visit]bool)}
	for _, v := range vs {
		h.walk(reflect.ValueOf(v))
	}
	var n int64
	for _, b := range h.arrays {
		n += b
	}
	return n
}

// held is HeldBytes' walk: the bytes of each array by its end address, and
// the pointers and maps already visited.
type held struct {
	arrays  map[uintptr]int64
	visited map[visit]bool
}

// visit is a pointer or map visited, with its type: a struct and its first
// field share an address.
type visit struct {
	p uintptr
	t reflect.Type
}

// scalar reports whether values of kind k hold no reference to walk.
func scalar(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		return false
	}
	return true
}

func (h *held) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		if v.IsNil() {
			return
		}
		k := visit{v.Pointer(), v.Type()}
		if h.visited[k] {
			return
		}
		h.visited[k] = true
		if v.Kind() == reflect.Pointer {
			h.walk(v.Elem())
			return
		}
		for it := v.MapRange(); it.Next(); {
			h.walk(it.Key())
			h.walk(it.Value())
		}
	case reflect.Interface:
		if !v.IsNil() {
			h.walk(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).Tag.Get("held") != "-" {
				h.walk(v.Field(i))
			}
		}
	case reflect.Array:
		if scalar(v.Type().Elem().Kind()) {
			return // counted with what holds it
		}
		for i := range v.Len() {
			h.walk(v.Index(i))
		}
	case reflect.Slice:
		size := int64(v.Type().Elem().Size())
		if v.Cap() == 0 || size == 0 {
			return
		}
		b := int64(v.Cap()) * size
		end := uintptr(v.UnsafePointer()) + uintptr(b)
		if b <= h.arrays[end] {
			return // counted, and walked, from a slice reaching as far back
		}
		h.arrays[end] = b
		if scalar(v.Type().Elem().Kind()) {
			return
		}
		w := v.Slice3(0, v.Cap(), v.Cap())
		for i := range w.Len() {
			h.walk(w.Index(i))
		}
	}
}
