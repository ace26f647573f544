package lambdart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVMHWM(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{name: "linux status", status: "Name:\tbootstrap\nVmPeak:\t  1000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 100 kB\n", want: 12345 * 1024},
		{name: "no line", status: "Name:\tbootstrap\n", wantErr: true},
		{name: "bad unit", status: "VmHWM:\t 12 MB\n", wantErr: true},
		{name: "bad number", status: "VmHWM:\t x kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := vmHWM([]byte(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("vmHWM() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("vmHWM() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLineLog(t *testing.T) {
	l := newLineLog(nil)
	out, errs := l.writer(), l.writer()
	for _, w := range []struct {
		to   interface{ Write([]byte) (int, error) }
		text string
	}{
		{out, "first li"}, {errs, "stderr line\r\n"}, {out, "ne\nsecond\n"}, {out, "no newline"},
	} {
		if _, err := w.to.Write([]byte(w.text)); err != nil {
			t.Fatal(err)
		}
	}
	l.flush()
	got, _ := l.snapshot()
	want := []string{"stderr line", "first line", "second", "no newline"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestNewRequestID(t *testing.T) {
	a, b := newRequestID(), newRequestID()
	if len(a) != 36 || a[14] != '4' || a == b {
		t.Errorf("newRequestID() = %q, %q: want distinct version-4 UUIDs", a, b)
	}
}
