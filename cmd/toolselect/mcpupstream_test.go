package main

import "testing"

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "[::1]:0": true, "localhost:9": true, "0.0.0.0:8080": false, ":8080": false, "10.1.2.3:80": false} {
		if isLoopback(addr) != want {
			t.Errorf("isLoopback(%q) = %v", addr, !want)
		}
	}
}
