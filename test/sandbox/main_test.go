package sandbox_test

import (
	"testing"

	"github.com/drainpipe/drainpipe/test/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }
