package backend

import "testing"

func TestLogitsPool(t *testing.T) {
	var p LogitsPool
	a := p.Get(8)
	if len(a) != 8 {
		t.Fatalf("Get(8) on an empty pool: len %d", len(a))
	}
	p.Put(a)
	b := p.Get(8)
	if &b[0] != &a[0] {
		t.Error("Get after Put of a large enough slice made a new one")
	}
	if c := p.Get(8); &c[0] == &a[0] {
		t.Error("one slice handed back was handed out twice")
	}
	p.Put(a[:4])
	if c := p.Get(6); len(c) != 6 || &c[0] != &a[0] {
		t.Errorf("a shorter slice of enough capacity was not reused (len %d)", len(c))
	}
	p.Put(make([]float32, 2))
	if c := p.Get(6); len(c) != 6 {
		t.Errorf("a slice too small for n: got len %d", len(c))
	}
}
