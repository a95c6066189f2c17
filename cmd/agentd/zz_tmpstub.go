//go:build tmpstub

package main

import (
	"context"
	"io"
)

func runIndex(ctx context.Context, args []string, stderr io.Writer) int { return 2 }
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int { return 2 }
