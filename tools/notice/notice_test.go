package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// NOTICE lists the modules the bootstrap links today: adding, dropping or
// upgrading one without regenerating it fails here.
func TestNoticeCurrent(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var b bytes.Buffer
	if err := generate(ctx, "../..", &b); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join("..", "..", "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("NOTICE is out of date: run `go run ./tools/notice` at the repository root\n%s", firstDiff(string(have), b.String()))
	}
	for _, want := range []string{"k8s.io/client-go", "github.com/aws/aws-sdk-go-v2/service/ec2", "---- NOTICE of github.com/aws/aws-sdk-go-v2 ----"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("NOTICE lacks %q", want)
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		x, y := line(al, i), line(bl, i)
		if x != y {
			return fmt.Sprintf("line %d:\n  NOTICE:    %s\n  generated: %s", i+1, x, y)
		}
	}
	return ""
}

func line(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return "(end)"
}

func TestClassify(t *testing.T) {
	mit := "Permission is hereby granted, free of charge, to any person ...\n\nThe above copyright notice and this\npermission notice shall be included in all copies"
	bsd3 := "Redistribution and use in source and binary forms, with or without ... Neither the name of Google Inc. nor the names of its contributors may be used to endorse or promote products"
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"apache", "                                 Apache License\n                           Version 2.0, January 2004", []string{"Apache-2.0"}},
		{"apache notice form", "Licensed under the Apache License, Version 2.0 (the \"License\");", []string{"Apache-2.0"}},
		{"mit", mit, []string{"MIT"}},
		{"mit-0", "MIT No Attribution\n\nPermission is hereby granted, free of charge, to any person", []string{"MIT-0"}},
		{"bsd-3", bsd3, []string{"BSD-3-Clause"}},
		{"bsd-2", "Redistribution and use in source and binary forms, with or without modification", []string{"BSD-2-Clause"}},
		{"mit and bsd-3 in one file", mit + "\n\n" + bsd3, []string{"MIT", "BSD-3-Clause"}},
		{"unknown", "All rights reserved. Do not copy.", nil},
	} {
		got := classify(c.text)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// A module whose licence no marker knows stops the generator: a person
// must read it before it ships.
func TestDetectUnknown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("All rights reserved."), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := detect(dir); err == nil {
		t.Fatalf("got %q, want an error", got)
	}
	if got, err := detect(t.TempDir()); err == nil {
		t.Fatalf("no licence file: got %q, want an error", got)
	}
}
